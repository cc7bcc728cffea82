/**
 * What only a network of the test's own can show: hosts with no route (the connect error
 * that used to kill the box) and a service on a public address of this machine. Each runs
 * test-netns-child.ts in a fresh network namespace (`unshare --net`, as root), so the host's
 * routes and interfaces are never touched.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';

const CHILD = path.join(import.meta.dirname, 'test-netns-child.ts');

/** Why this machine cannot run the scenarios, or null when it can. */
function whyNoNamespace(): string | null {
  const probe = spawnSync('unshare', ['--net', '--', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (probe.error) return `cannot run unshare/ip (${probe.error.message}); install util-linux and iproute2`;
  if (probe.status !== 0) return `cannot make a network namespace (needs root): ${probe.stderr.trim()}`;
  return null;
}
const noNamespace = whyNoNamespace();

async function inNamespace(ctx: TestContext, scenario: string): Promise<Record<string, unknown>> {
  if (noNamespace !== null) ctx.skip(noNamespace);
  const child = spawn('unshare', ['--net', '--', process.execPath, '--import', 'tsx', CHILD, scenario], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  // Exit 0 and a last line of JSON: the process lived through every request.
  expect(code, `the box process in the namespace exited: ${stderr}`).toBe(0);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
}

describe('outbound requests in a network of the test’s own', () => {
  it('an unreachable host (no route; unreachable, blackhole and prohibit routes), IPv4 and IPv6, name or literal, http or https, is an error answer and the box stays up', async (ctx) => {
    const seen = (await inNamespace(ctx, 'unreachable')) as {
      answers: Array<{ url: string; status: number; error: string }>;
      stillUp: number;
    };
    expect(seen.answers.length).toBe(24);
    for (const { url, status, error } of seen.answers) {
      expect(status, url).toBe(502);
      expect(error, url).toMatch(/^remoteImage: cannot fetch from \S+: connect E[A-Z]+ /);
      expect(error, url).toContain(new URL(url).hostname.replace(/^\[|\]$/g, ''));
    }
    expect(seen.stillUp).toBe(200);
  }, 60_000);

  it('a service on a public address this machine gains after start is refused by the outbound client, the image proxy and the egress proxy, and reached only when the operator names it', async (ctx) => {
    const seen = (await inNamespace(ctx, 'own-interface')) as {
      before: Record<string, string>;
      after: Record<string, string>;
      outbound: string[];
      egress: string[];
      hitsBeforeOperator: string[];
      trusted: { status: number; body: string };
    };
    // Public until the interface comes up; this machine's from the next check on.
    expect(seen.before).toEqual({ v4: 'public' });
    expect(seen.after).toEqual({ v6: 'local', v4: 'local' });
    for (const line of seen.outbound) expect(line).toMatch(/refused \S+: .*an address of this machine/);
    expect(seen.egress).toHaveLength(4);
    for (const line of seen.egress) {
      expect(line).toMatch(/^HTTP\/1\.1 403 Forbidden sendbox: refused .*sandboxes never reach this machine/);
    }
    expect(seen.hitsBeforeOperator).toEqual([]);
    expect(seen.trusted).toEqual({ status: 200, body: 'a service of this machine' });
  }, 60_000);
});

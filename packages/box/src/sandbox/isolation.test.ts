/**
 * Agents kept apart from each other and from the host's other users (docs/sandbox.md,
 * "A uid per agent"): the real box, confined, two agents whose scripted model runs
 * the command each prompt carries, and host processes of other uids trying to reach
 * in. Separate uids need root, which is how the box runs when it gives them.
 */
import { execFile } from 'node:child_process';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedProvider, type ScriptSource } from '../providers/scripted.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import type { AgentHostOptions } from '../host/agent-host.ts';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;
/** The host's `nobody`: the uid every agent shared before each got its own. */
const NOBODY = 65534;

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

/** The text of the request's last user message and the tool results after it. */
function sinceLastPrompt(request: ModelStepRequest) {
  const at = request.messages.findLastIndex((m) => m.role === 'user');
  const after = request.messages.slice(at + 1);
  return { prompt: JSON.stringify(request.messages[at]?.content ?? ''), after };
}

/** What a shell result envelope printed: stdout, then stderr. */
function printed(envelopeText: string): string {
  const envelope = JSON.parse(envelopeText) as Record<string, { stdout?: string; stderr?: string }>;
  const body = envelope.success ?? envelope.failure ?? {};
  return `${body.stdout ?? ''}${body.stderr ?? ''}` || envelopeText;
}

/**
 * A model that runs the command a prompt carries (`RUN:<base64>:<timeout ms>`) as one
 * shell call, then sends "done"; what the command printed is kept by command.
 */
function commandsFromPrompts(outputs: Map<string, string>): ScriptSource {
  return (request) => {
    const { prompt, after } = sinceLastPrompt(request);
    const [, encoded = '', timeout = '30000'] = /RUN:([A-Za-z0-9+/=]+):(\d+)/.exec(prompt) ?? [];
    const command = Buffer.from(encoded, 'base64').toString();
    const replies = after.filter((m) => m.role === 'assistant').length;
    if (replies === 0)
      return { toolCalls: [{ name: 'shell', input: { command, timeout: Number(timeout) } }] };
    if (replies === 1) {
      const result = after.find((m) => m.role === 'tool');
      const part = result?.role === 'tool' ? result.content[0] : undefined;
      const output = part?.type === 'tool-result' ? part.output : undefined;
      const value = output?.type === 'text' || output?.type === 'error-text' ? output.value : '{}';
      outputs.set(command, printed(value));
      return { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'done' } }] };
    }
    return {};
  };
}

const runPrompt = (command: string, timeoutMs = 30_000) =>
  `RUN:${Buffer.from(command).toString('base64')}:${timeoutMs}`;

/** A confined box with two agents, A (the fixture's) and B. */
async function twoAgents(options: Partial<AgentHostOptions> = {}) {
  const outputs = new Map<string, string>();
  fx = await hostFixture([], { provider: scriptedProvider(commandsFromPrompts(outputs)), ...options });
  const box = fx;
  const b = await box.host.createAgent({ name: 'Agent B' });
  let nonce = 0;
  const start = (agentId: string, command: string, timeoutMs?: number) =>
    box.host.sendPrompt({ agentId, prompt: runPrompt(command, timeoutMs), clientNonce: `n${++nonce}` });
  return {
    box,
    a: { id: box.agentId, sandbox: box.sandbox },
    b: { id: b.id, sandbox: path.join(box.dataDir, 'sandboxes', b.id) },
    outputs,
    start,
    /** Runs the command in the agent's sandbox to the end of its turn; returns what shell answered. */
    async run(agentId: string, command: string, timeoutMs?: number) {
      await start(agentId, command, timeoutMs);
      await box.host.idle(agentId);
      return outputs.get(command) ?? '';
    },
  };
}

/** Host processes whose command line is exactly `words` (the sandbox's own, seen from the host). */
async function waitForProcess(words: string, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const name of await readdir('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
      if (cmdline.split('\0').filter(Boolean).join(' ') === words) return Number(name);
    }
    if (Date.now() > deadline) throw new Error(`no process "${words}" appeared`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a shell line on the host as `uid` (no groups, no capabilities); never throws. */
async function asUid(uid: number, line: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('setpriv', [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      'bash',
      '-c',
      line,
    ]);
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe.runIf(asRoot)('a uid per agent (as root)', () => {
  it('gives each agent its own uid from the range, owning its folder, kept when the box restarts', async () => {
    const scene = await twoAgents();
    const [ua, ub] = [(await lstat(scene.a.sandbox)).uid, (await lstat(scene.b.sandbox)).uid];
    expect(ua).not.toBe(ub);
    for (const uid of [ua, ub]) expect(uid).toBeGreaterThanOrEqual(1_879_048_192);
    expect(await scene.run(scene.a.id, 'id -u; id -g; id -G; stat -c %u .')).toContain(
      `${ua}\n${ua}\n${ua}\n${ua}`,
    );
    expect(scene.box.host.sandboxStatus().detail).toContain('each agent as its own uid');
    // A restarted box on the same data dir: same uids.
    await scene.box.host.close();
    const { createAgentHost } = await import('../host/agent-host.ts');
    const again = await createAgentHost({ dataDir: scene.box.dataDir, provider: null, env: {} });
    try {
      await again.openAgent(scene.b.id);
      await again.openAgent(scene.a.id);
      expect((await lstat(scene.a.sandbox)).uid).toBe(ua);
      expect((await lstat(scene.b.sandbox)).uid).toBe(ub);
    } finally {
      await again.close();
    }
  });

  it("keeps a running command's environment and folder from the host's nobody and from another agent's uid", async () => {
    const scene = await twoAgents();
    const ub = (await lstat(scene.b.sandbox)).uid;
    // The marker lives only in the environment of the command's process.
    await scene.start(scene.a.id, 'export API_TOKEN=tok_4c9b1e77d2; exec sleep 97.31', 60_000);
    const pid = await waitForProcess('sleep 97.31');
    try {
      const own = await readFile(`/proc/${pid}/environ`, 'utf8');
      expect(own).toContain('tok_4c9b1e77d2'); // the check below reads the right process
      for (const uid of [NOBODY, ub]) {
        const environ = await asUid(uid, `cat /proc/${pid}/environ`);
        expect(environ.out, `uid ${uid}`).not.toContain('tok_4c9b1e77d2');
        expect(environ.out).toMatch(/Permission denied/);
        const planted = await asUid(uid, `echo planted > /proc/${pid}/cwd/planted-${uid}.txt && echo WROTE`);
        expect(planted.out, `uid ${uid}`).not.toContain('WROTE');
        await expect(stat(path.join(scene.a.sandbox, `planted-${uid}.txt`))).rejects.toThrow(/ENOENT/);
      }
    } finally {
      await scene.box.host.cancelTurn(scene.a.id);
      await scene.box.host.idle(scene.a.id);
    }
  });

  it("one agent's fork bomb does not starve another agent's command", async () => {
    const scene = await twoAgents({ sandbox: { limits: { processes: 48 } } });
    // A fork bomb that holds every process it can get (it forks again whenever one is free).
    const bomb =
      "perl -e 'while (1) { my $p = fork(); if (!defined $p) { select(undef, undef, undef, 0.05); next } if (!$p) { sleep 60; exit 0 } }'";
    await scene.start(scene.a.id, bomb, 9000);
    // B forks 30 children (under its own limit of 48) while A's bomb holds all of A's. One perl,
    // exec'd: no fork of bash's that could wait for a free slot.
    const count =
      'exec perl -e \'sleep 2; my $n = 0; for (1..30) { my $p = fork(); last unless defined $p; if (!$p) { sleep 3; exit 0 } $n++ } print "forked=$n\\n"\'';
    const out = await scene.run(scene.b.id, count);
    expect(out).toContain('forked=30');
    await scene.box.host.idle(scene.a.id);
  });

  it('gives no kernel keyring: its calls fail, and nothing passes from one agent to another', async () => {
    const scene = await twoAgents();
    const put = await scene.run(
      scene.a.id,
      'keyctl add user handoff-u from-a @u; keyctl add user handoff-s from-a @s; keyctl add user handoff-us from-a @us; echo put',
    );
    expect(put).toContain('put');
    expect(put).toMatch(/Operation not permitted/);
    const got = await scene.run(
      scene.b.id,
      'keyctl print %user:handoff-u; keyctl print %user:handoff-s; keyctl print %user:handoff-us; keyctl show @u; echo got',
    );
    expect(got).toContain('got');
    expect(got).not.toContain('from-a');
  });
});

describe('limits every confined command gets', () => {
  it('inherits at most 1,024 open files (soft and hard)', async () => {
    const scene = await twoAgents();
    const out = await scene.run(
      scene.a.id,
      'ulimit -Sn; ulimit -Hn; perl -e \'my @f; for (1..1100) { open(my $h, "<", "/dev/null") or last; push @f, $h } print "opened=", scalar(@f), "\\n"\'',
    );
    expect(out).toContain('1024\n1024\n');
    expect(Number(/opened=(\d+)/.exec(out)?.[1])).toBeLessThan(1024);
  });
});

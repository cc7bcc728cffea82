/**
 * The `sessions` builtin through the real box: `"sessions": {"builtin": "sessions"}` in mcp.json
 * starts `txcript mcp` confined, and an agent's `mcp` call finds a Claude Code session planted in
 * a temp HOME; what the server may read is the transcript roots only.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findHarness } from '@sendbox/txcript';
import { afterEach, describe, expect, it } from 'vitest';
import { codingSession } from '../../../txcript/test/fixtures/search/generate.ts';
import { hostFixture, lastToolOutputs, type HostFixture } from '../testing/host-fixture.ts';
import { sessionsServerConfig, txcriptInstall } from './sessions-server.ts';

const SESSION = '55555555-5555-4555-8555-555555555555';
let fx: HostFixture | undefined;
let home: string | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
  if (home) await rm(home, { recursive: true, force: true });
  home = undefined;
});

const call = (name: string, input: Record<string, unknown>) => ({ toolCalls: [{ name, input }] });
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Found it.' } }] };

/** A temp HOME with one Claude Code session in its default place (`~/.claude/projects`). */
async function homeWithClaudeSession(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-home-'));
  const claude = findHarness('claude_code');
  await claude.store!({ HOME: dir }).save!(
    codingSession(SESSION, {
      start: '2026-09-01T10:00:00Z',
      cwd: '/work/shop',
      prompt: 'why does the invoice total drift?',
      command: 'grep -rn rounding src/',
      output: 'src/invoice.ts:12: Math.round(total * 100) / 100',
      answer: 'The invoice rounds each line before summing.',
    }),
  );
  return dir;
}

describe('the sessions builtin', () => {
  it("an agent's mcp call to `sessions` finds a Claude Code session of the host's home", async () => {
    home = await homeWithClaudeSession();
    fx = await hostFixture(
      [
        call('mcp', { server: 'sessions', toolName: 'search_sessions', args: { query: 'invoice rounds' } }),
        call('mcp', { server: 'sessions', toolName: 'read_session', args: { id: SESSION } }),
        reply,
        { text: '' },
      ],
      { mcp: { hostHome: home } },
    );
    await writeFile(
      path.join(fx.dataDir, 'mcp.json'),
      JSON.stringify({ mcpServers: { sessions: { builtin: 'sessions', timeoutMs: 120_000 } } }),
    );
    await fx.prompt('what did we find about the invoice?');
    const [hits] = lastToolOutputs(fx.model, 1);
    expect(hits).toContain(SESSION);
    expect(hits).toContain('claude_code');
    const [session] = lastToolOutputs(fx.model, 2);
    expect(session).toContain('The invoice rounds each line before summing.');
  }, 180_000);

  it('binds the transcript roots and the box transcripts read-only, never the data dir or the rest of the home', async () => {
    home = await homeWithClaudeSession();
    await mkdir(path.join(home, '.ssh'), { recursive: true });
    const dataDir = path.join(home, 'agent-data');
    await mkdir(path.join(dataDir, 'agent-transcripts'), { recursive: true });
    await mkdir(path.join(dataDir, 'keys'), { recursive: true });
    const config = await sessionsServerConfig(
      { kind: 'builtin', builtin: 'sessions' },
      { dataDir, hostHome: home, serverHome: path.join(dataDir, 'mcp-homes', 'a', 'sessions') },
    );
    const install = await txcriptInstall();
    expect(config.readOnly).toEqual([
      install.root,
      path.join(home, '.claude/projects'),
      path.join(dataDir, 'agent-transcripts'),
    ]);
    expect(config.allowDomains).toEqual([]);
    expect(config.args).toEqual([install.bin, 'mcp']);
    expect(config.env).toMatchObject({
      HOME: home,
      XDG_CACHE_HOME: path.join(dataDir, 'mcp-homes', 'a', 'sessions', '.cache'),
      TXCRIPT_GROK_BOT_ROOT: path.join(dataDir, 'agent-transcripts'),
    });
  });
});

/**
 * The real `txcript` process against a real Grok Bot box in a temp HOME:
 * what the shell sees (exit codes, stdout vs stderr, colour, JSON). Each
 * spawn costs a few hundred milliseconds, so behaviour is tested in-process
 * (cli.test.ts) and only the process boundary here.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { findHarness } from '../harness/registry.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, type Outcome } from '../../test/run-process.ts';
import {
  boxPaths,
  conversation,
  delegation,
  generateLargeJsonl,
  writeJsonl,
  writeProfile,
} from '../../test/fixtures/grok-bot/generate.ts';
import { createGrokBotStore, grokBotRoots } from '../harness/grok-bot/index.ts';
import { summaryCacheFile } from '../harness/grok-bot/summary-cache.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));
const linked = fileURLToPath(new URL('../../../../node_modules/.bin/txcript', import.meta.url));

let home: string;

function txcript(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; via?: string } = {},
): Promise<Outcome> {
  const command = options.via ?? process.execPath;
  const argv = options.via === undefined ? [bin, ...args] : args;
  // A clean environment: no inherited colour or CI settings, HOME at the temp box.
  return runProcess(command, argv, {
    env: { PATH: process.env.PATH ?? '', HOME: home, TZ: 'UTC', ...options.env },
    stdin: options.stdin ?? '',
  });
}

const PARENT = 'agent-parent';
const CHILD = 'sand-subagent-5e1f0a3c-2b9d-4c7e-8f60-1a2b3c4d5e6f';
const SOLO = 'agent-solo';

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-cli-'));
  const p = boxPaths(home);
  const parentFile = writeJsonl(
    p,
    PARENT,
    [...conversation('delegate the report'), ...delegation(CHILD)].join('\n') + '\n',
  );
  writeProfile(p, PARENT, { name: 'Report desk', harness: 'box' });
  const childFile = writeJsonl(p, CHILD, conversation('write the report').join('\n') + '\n');
  const soloFile = writeJsonl(p, SOLO, conversation('what is the weather').join('\n') + '\n');
  await utimes(parentFile, new Date('2026-09-10T10:00:00Z'), new Date('2026-09-10T10:00:00Z'));
  await utimes(childFile, new Date('2026-09-10T11:00:00Z'), new Date('2026-09-10T11:00:00Z'));
  await utimes(soloFile, new Date('2026-09-09T08:00:00Z'), new Date('2026-09-09T08:00:00Z'));
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('txcript as a process', () => {
  it('runs through the npm bin link and prints help with exit 0', async () => {
    expect(existsSync(linked)).toBe(true);
    const r = await txcript(['list', '--help'], { via: linked });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: txcript list [options]');
    expect(r.stderr).toBe('');
  });

  it('exits 2 on an unknown option, with one line on stderr and nothing on stdout', async () => {
    const r = await txcript(['list', '--bogus']);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'txcript: unknown option \'--bogus\' — see "txcript list --help"\n',
    });
  });

  it('prints stable JSON on stdout while progress goes to stderr', async () => {
    const r = await txcript(['list', '--json'], { env: { TXCRIPT_PROGRESS_DELAY_MS: '0' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^txcript: scanning sessions \d+\/\d+\n/);
    const t = (iso: string) => new Date(iso).toISOString();
    expect(JSON.parse(r.stdout)).toEqual([
      {
        id: PARENT,
        harness: 'grok_bot',
        title: 'Report desk',
        messages: 6,
        last_activity: t('2026-09-10T10:00:00Z'),
        parent: null,
        locator: join(home, 'agent-data', 'agent-transcripts', PARENT, `${PARENT}.jsonl`),
      },
      {
        id: CHILD,
        harness: 'grok_bot',
        title: 'write the report',
        messages: 4,
        last_activity: t('2026-09-10T11:00:00Z'),
        parent: PARENT,
        locator: join(home, 'agent-data', 'agent-transcripts', CHILD, `${CHILD}.jsonl`),
      },
      {
        id: SOLO,
        harness: 'grok_bot',
        title: 'what is the weather',
        messages: 4,
        last_activity: t('2026-09-09T08:00:00Z'),
        parent: null,
        locator: join(home, 'agent-data', 'agent-transcripts', SOLO, `${SOLO}.jsonl`),
      },
    ]);
  });

  it('list serves the summary cache; --no-cache and TXCRIPT_NO_CACHE=1 read the sources and leave it alone', async () => {
    const env = { HOME: home };
    const file = summaryCacheFile(env, grokBotRoots(env));
    // Fill the cache in-process with a clock past the racy window, then tamper with one entry.
    await createGrokBotStore(env, { summaryCache: { now: () => Date.now() + 60_000 } }).discover();
    const solo = join(home, 'agent-data', 'agent-transcripts', SOLO, `${SOLO}.jsonl`);
    const cache = JSON.parse(await readFile(file, 'utf8')) as {
      transcripts: Record<string, { scan: { messageCount: number } }>;
    };
    cache.transcripts[solo]!.scan.messageCount = 999;
    const tampered = JSON.stringify(cache);
    await writeFile(file, tampered);
    const messages = (r: Outcome): unknown =>
      (JSON.parse(r.stdout) as { id: string; messages: number }[]).find((row) => row.id === SOLO)?.messages;
    try {
      expect(messages(await txcript(['list', '--json']))).toBe(999);
      expect(messages(await txcript(['list', '--json', '--no-cache']))).toBe(4);
      expect(messages(await txcript(['list', '--json'], { env: { TXCRIPT_NO_CACHE: '1' } }))).toBe(4);
      expect(await readFile(file, 'utf8')).toBe(tampered);
    } finally {
      await rm(file, { force: true });
    }
  });

  it('colours with FORCE_COLOR and honours NO_COLOR over it', async () => {
    const forced = await txcript(['list'], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain('\u001b[');
    const plain = await txcript(['list'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('\u001b[');
    expect(plain.stdout).toMatch(new RegExp(`^ID .*\\n${PARENT} .*Report desk\\n└ ${CHILD} `));
  });

  it('views a Grok Bot session by title with a range: replies visible, text as thinking', async () => {
    const r = await txcript(['view', 'Report desk#1-4']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('Report desk');
    expect(r.stdout).toContain('── #1 · user ──\n'); // the file gives the prompt no time
    expect(r.stdout).toContain('── #3 · assistant · 2026-09-04T01:30:00.095Z ──'); // the send's result does
    expect(r.stdout).toContain('delegate the report');
    expect(r.stdout).toContain('thinking: thinking it over');
    expect(r.stdout).toContain('Re: delegate the report');
    expect(r.stdout).not.toContain('── #5');
  });

  it('refuses a range that separates a tool call from its result, exit 2', async () => {
    const r = await txcript(['view', `${PARENT}#1-5`]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'txcript: range #1-5 separates the tool call in #5 from its result in #6 — use #1-4 (narrower) or #1-6 (wider) to keep tool calls with their results\n',
    );
  });

  it('converts a Simple document from stdin into Grok Bot JSONL', async () => {
    const simple = JSON.stringify({
      messages: [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: [{ type: 'tool_use', name: 'Bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', content: 'a.txt' }] },
        { role: 'wizard', content: 'ignored' },
      ],
    });
    const r = await txcript(['convert', '-', '--from', 'simple', '--to', 'grok-bot'], { stdin: simple });
    expect(r.code).toBe(0);
    const records = r.stdout
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { role: string; message: { content: Array<{ type: string; name?: string }> } },
      );
    expect(records.map((x) => x.role)).toEqual(['user', 'assistant', 'tool']);
    expect(records[1]!.message.content[0]).toMatchObject({ type: 'tool_use', name: 'shell' });
    expect(r.stderr).toContain('txcript: warning: messages[3].role: unknown role');
  });
});

describe('a transcript too large for the heap', () => {
  it('is refused with what to do, instead of a crash, by view and convert (a Claude Code one fits: it is read line by line)', async () => {
    const big = await mkdtemp(join(tmpdir(), 'txcript-big-'));
    try {
      const p = boxPaths(big);
      const file = writeJsonl(p, 'agent-big', generateLargeJsonl(16 * 1024 * 1024));
      // 16 MB needs ~200 MB loaded: more than 48 MB of old space, far less than the default heap.
      const small = { HOME: big, NODE_OPTIONS: '--max-old-space-size=48' };
      const viewed = await txcript(['view', 'agent-big#-2'], { env: small });
      expect(viewed.code).toBe(1);
      expect(viewed.stderr).toMatch(/could not load grok_bot session agent-big: the transcript is 1[67] MB/);
      expect(viewed.stderr).toMatch(/NODE_OPTIONS=--max-old-space-size=\d+/);
      expect(viewed.stderr).not.toMatch(/FATAL ERROR|heap out of memory/);
      const converted = await txcript(['convert', file, '--from', 'grok_bot', '--to', 'simple'], {
        env: small,
      });
      expect(converted.code).toBe(1);
      expect(converted.stderr).toMatch(/the transcript is 1[67] MB/);
      expect((await txcript(['view', 'agent-big#-2'], { env: { HOME: big } })).code).toBe(0);

      // The stores with one file per session check the same way. Claude Code's is read line by line,
      // holding only Common: an old space that a whole read (12 bytes a byte) would not fit is enough.
      const claude = findHarness('claude_code');
      const messages = Array.from({ length: 30_000 }, (_, i) => ({
        role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
        content: [{ type: 'text' as const, text: `message ${i}: ${'lorem ipsum '.repeat(30)}` }],
        timestamp: '2026-09-01T12:00:00.000Z',
      }));
      const id = '0b5e7a2c-1d3f-4e6a-9b8c-7d6e5f4a3b2c';
      const records = claude.codec.fromCommon({
        meta: { id, timestamp: '2026-09-01T12:00:00.000Z' },
        messages,
      });
      const project = join(big, '.claude', 'projects', '-work-big');
      await mkdir(project, { recursive: true });
      const claudeText = claude.text.render(records);
      // 12 bytes of heap a byte would not fit the small heap; 3 do.
      expect(Buffer.byteLength(claudeText) * 12).toBeGreaterThan(96 * 1024 * 1024);
      await writeFile(join(project, `${id}.jsonl`), claudeText);
      const claudeArgs = ['view', `${id}#-2`, '--from', 'claude_code'];
      const claudeView = await txcript(claudeArgs, {
        env: { HOME: big, NODE_OPTIONS: '--max-old-space-size=96' },
      });
      expect(claudeView.stderr).not.toMatch(/FATAL ERROR|heap out of memory|could not load/);
      expect(claudeView.code).toBe(0);
      expect(claudeView.stdout).toContain('message 29999');
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  }, 60_000);
});

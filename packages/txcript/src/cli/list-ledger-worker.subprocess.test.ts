/**
 * `txcript list` reading ledgers on a worker thread (grok-bot/ledger-reads.ts),
 * through the real bin and its bundle: the worker's listing, warnings and
 * cache entries are those of the in-process reads.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, type Outcome } from '../../test/run-process.ts';
import {
  generateBox,
  ledgerConversation,
  writeLedger,
  writeProfile,
} from '../../test/fixtures/grok-bot/generate.ts';
import type { BoxPaths } from '../../test/fixtures/grok-bot/generate.ts';
import { createGrokBotStore, grokBotRoots } from '../harness/grok-bot/index.ts';
import { WORKER_THRESHOLD } from '../harness/grok-bot/ledger-reads.ts';
import { oneLine } from './errors.ts';
import { summaryCacheFile } from '../harness/grok-bot/summary-cache.ts';
import { RACY_WINDOW_MS } from '../harness/summary-cache-file.ts';
import type { DiscoverResult } from '../harness/types.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));

let home: string;
let box: BoxPaths;
let boxWritten: number;
/** The in-process listing (vitest runs the sources: ledgers are read on this thread). */
let expected: DiscoverResult;

function txcript(args: string[], env: Record<string, string>): Promise<Outcome> {
  return runProcess(process.execPath, [bin, ...args], {
    // No progress line on stderr, however slow the run.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TZ: 'UTC',
      TXCRIPT_PROGRESS_DELAY_MS: '600000',
      ...env,
    },
  });
}

const LEDGER_ONLY = WORKER_THRESHOLD + 6;
const NAMELESS = 'agent-nameless';
const CORRUPT = 'agent-corrupt';
const BAD_BOTH = 'agent-bad-profile-bad-ledger';
const FOLDER_ONLY = 'agent-transcript-folder-only';

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-ledger-worker-'));
  box = generateBox(home, { agents: LEDGER_ONLY + 8, withJsonl: 8, ledgerEntries: 3 });
  writeProfile(box, NAMELESS, { description: 'no name: the title comes from the ledger' });
  writeLedger(box, NAMELESS, ledgerConversation('what the nameless agent was asked'));
  writeProfile(box, CORRUPT, { name: 'Corrupt ledger' });
  writeFileSync(join(box.agents, CORRUPT, 'store.db'), 'this is not a database\n'.repeat(20));
  mkdirSync(join(box.agents, BAD_BOTH));
  writeFileSync(join(box.agents, BAD_BOTH, 'profile.json'), '{"name": ');
  writeFileSync(join(box.agents, BAD_BOTH, 'store.db'), 'SQLite format 3\0 but nothing else');
  // A transcript folder without its JSONL: the agent is profile-only after all.
  mkdirSync(join(box.transcripts, FOLDER_ONLY), { recursive: true });
  writeProfile(box, FOLDER_ONLY, { name: 'Folder only' });
  writeLedger(box, FOLDER_ONLY, ledgerConversation('asked before the transcript went missing'));
  boxWritten = Date.now();
  expected = await createGrokBotStore(box.env).discover({ cache: false });
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('txcript list with ledger reads on a worker thread', () => {
  it('lists and warns exactly as the in-process reads, with the worker forced on, forced off or chosen', async () => {
    const sessions = expected.sessions.filter((s) => !s.locator.endsWith('.jsonl'));
    expect(sessions.length).toBeGreaterThanOrEqual(WORKER_THRESHOLD);
    expect(expected.sessions.find((s) => s.id === NAMELESS)?.title).toBe('what the nameless agent was asked');
    expect(expected.sessions.find((s) => s.id === FOLDER_ONLY)?.messageCount).toBe(3); // the prompt, and the send as a call and its result
    const found = expected.warnings.map((w) => `${w.source} ${w.message.replace(/:.*/s, ':')}`);
    // In folder order; an agent's profile warning before its ledger's.
    expect([...found].sort()).toEqual([
      `${join(box.agents, BAD_BOTH, 'profile.json')} profile is not valid JSON:`,
      `${join(box.agents, BAD_BOTH, 'store.db')} ledger not read:`,
      `${join(box.agents, CORRUPT, 'store.db')} ledger not read:`,
    ]);
    expect(found.indexOf(`${join(box.agents, BAD_BOTH, 'store.db')} ledger not read:`)).toBe(
      found.indexOf(`${join(box.agents, BAD_BOTH, 'profile.json')} profile is not valid JSON:`) + 1,
    );

    const args = ['list', '--json', '--no-cache'];
    // Each run its own cache folder: a warning already shown today is not shown again.
    const fresh = (name: string) => ({ XDG_CACHE_HOME: join(home, `cache-${name}`) });
    const off = await txcript(args, { TXCRIPT_LEDGER_WORKER: '0', ...fresh('off') });
    const on = await txcript(args, { TXCRIPT_LEDGER_WORKER: '1', ...fresh('on') });
    const auto = await txcript(args, fresh('auto'));
    expect(off.code).toBe(0);
    // Forced on, a worker that cannot be used is a warning: equal stderr means the worker read them all.
    expect(on).toEqual(off);
    expect(auto).toEqual(off);
    expect(off.stderr).not.toContain('ledger worker');

    const rows = JSON.parse(off.stdout) as {
      id: string;
      title: string | null;
      messages: number;
      last_activity?: string;
      locator: string;
    }[];
    expect(rows.map((r) => r.id).sort()).toEqual(expected.sessions.map((s) => s.id).sort());
    for (const s of expected.sessions) {
      const row = rows.find((r) => r.id === s.id)!;
      expect([row.title, row.messages, row.last_activity, row.locator]).toEqual([
        s.title ?? null,
        s.messageCount,
        s.lastActivity,
        s.locator,
      ]);
    }
    expect(off.stderr).toBe(
      expected.warnings.map((w) => `txcript: warning: ${oneLine(w.message)} (${w.source})\n`).join(''),
    );
  });

  it('caches what the worker read as it caches in-process reads, recent changes left out', async () => {
    // Sources changed within the racy window are not remembered: let the box age past it.
    const age = Date.now() - boxWritten;
    if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
    // A ledger changed within the racy window of its stat is not remembered. Its mtime is set a minute
    // ahead, so that it stays inside the window however slowly the runs start.
    const touched = join(box.agents, NAMELESS, 'store.db');
    utimesSync(touched, new Date(), new Date(Date.now() + 60_000));
    const cacheOf = async (mode: string): Promise<{ ledgers: Record<string, unknown> }> => {
      const xdg = join(home, `cache-${mode}`);
      const r = await txcript(['list', '--json'], { TXCRIPT_LEDGER_WORKER: mode, XDG_CACHE_HOME: xdg });
      expect(r.stderr).not.toContain('ledger worker');
      const env = { ...box.env, XDG_CACHE_HOME: xdg };
      return JSON.parse(await readFile(summaryCacheFile(env, grokBotRoots(env)), 'utf8')) as {
        ledgers: Record<string, unknown>;
      };
    };
    const fromWorker = await cacheOf('1');
    const inProcess = await cacheOf('0');
    expect(fromWorker).toEqual(inProcess);
    const cached = Object.keys(fromWorker.ledgers);
    // Every readable ledger but the one just touched; failed reads are never cached.
    expect(cached).toHaveLength(LEDGER_ONLY + 1);
    expect(cached).not.toContain(touched);
    expect(cached).not.toContain(join(box.agents, CORRUPT, 'store.db'));
  });
});

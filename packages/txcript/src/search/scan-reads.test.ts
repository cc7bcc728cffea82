/**
 * Issue 23: a scan's reads spread over worker threads (scan-reads.ts) give
 * what one thread reading one session after another gives: the same hits in
 * the same order with the same scores, the same stop at a broad query's
 * bound, the same warnings in the same order. Small homes start no worker;
 * a worker that fails leaves its sessions to the main thread.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../cli/context.ts';
import { type ListedSession, discoverSessions } from '../cli/sessions.ts';
import { claudeCode } from '../harness/claude-code/index.ts';
import { generateClaudeProjects } from '../../test/fixtures/claude-code/generate.ts';
import type { Hit } from './hits.ts';
import { parseQuery } from './query.ts';
import { type ScanOptions, type ScanStats, scanHits } from './scan.ts';
import { READ_WORKER_BYTES, readWorkersFor, workersFromEnv } from './scan-reads.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcript-scan-reads-'));
const root = join(dir, 'projects');
const env = {
  HOME: dir,
  TXCRIPT_CLAUDE_CODE_ROOT: root,
  XDG_CACHE_HOME: join(dir, 'cache'),
  TZ: 'UTC',
  // Progress lines would go to stderr beside the warnings on a slow run.
  TXCRIPT_PROGRESS_DELAY_MS: '1000000000',
};
let sessions: ListedSession[];

beforeAll(async () => {
  generateClaudeProjects(root, { sessions: 60, projects: 3, resultLines: 3, seed: 7 });
  ({ sessions } = await discoverSessions(context([]), undefined));
  expect(sessions.length).toBe(60);
  // Three sessions gone since they were listed: each read warns.
  for (const s of sessions.filter((_, i) => i % 20 === 7)) rmSync(s.summary.locator);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function context(warnings: string[]) {
  return createContext({
    stdout: { write: () => true },
    stderr: { write: (s: string) => (warnings.push(s), true) },
    readStdin: () => Promise.resolve(''),
    env,
    now: () => new Date(),
    harnesses: [claudeCode],
  });
}

/** Everything a hit shows and is ranked by. */
const shown = (hits: Hit[]) =>
  hits.map((h) => `${h.ref} ${h.kind} ${h.message} ${h.score} ${h.snippet.text}`);

async function scan(text: string, options: ScanOptions, broadMatches?: number) {
  const warnings: string[] = [];
  const stats = {} as ScanStats;
  const filters = { limit: 10_000, ...(broadMatches !== undefined ? { broadMatches } : {}) };
  const hits = await scanHits(context(warnings), parseQuery(text), filters, sessions, options, stats);
  return { hits: shown(hits), warnings, read: stats.read, workers: stats.readWorkers };
}

describe('a scan read on worker threads', () => {
  // A narrow query ranked by BM25 over every session's rows; a broad one that stops at its bound
  // (newest first, so which sessions are read matters); two words never in one message.
  const cases: Array<[string, number | undefined]> = [
    ['"plan for step 3"', undefined],
    ['module tests', 150],
    ['"step 2" refactor', undefined],
    ['lorem refactor', undefined],
  ];

  it.each(cases)('gives the hits, order, scores, stop and warnings of one thread: %s', async (q, bound) => {
    const one = await scan(q, { readWorkers: 0, bytePass: false }, bound);
    const spread = await scan(q, { readWorkers: 2, bytePass: false }, bound);
    expect(one.workers).toBe(0);
    expect(spread.workers).toBe(2);
    expect(spread.hits).toEqual(one.hits);
    expect(spread.read).toBe(one.read);
    expect(spread.warnings).toEqual(one.warnings);
    if (bound === undefined) expect(one.warnings).toHaveLength(3);
    if (bound !== undefined) expect(one.read).toBeLessThan(sessions.length);
    else expect(one.read).toBe(sessions.length);
  });

  it('reads the sessions of a worker that fails on this thread', async () => {
    const crashing = join(dir, 'crashing-worker.mjs');
    writeFileSync(
      crashing,
      `import { workerData } from 'node:worker_threads';
       Atomics.add(workerData, 0, 5); // claims five sessions, and dies before reporting them
       throw new Error('worker down');`,
    );
    const one = await scan('"plan for step 3"', { readWorkers: 0, bytePass: false });
    const failed = await scan('"plan for step 3"', {
      readWorkers: 1,
      readWorkerUrl: new URL(`file://${crashing}`),
      bytePass: false,
    });
    expect(failed.hits).toEqual(one.hits);
    expect(failed.read).toBe(sessions.length);
  });
});

describe('when workers read', () => {
  it('from READ_WORKER_BYTES of sources on, on free cores; a small home is read on the main thread', async () => {
    const cores = availableParallelism();
    expect(readWorkersFor(READ_WORKER_BYTES - 1, 0)).toBe(0);
    expect(readWorkersFor(READ_WORKER_BYTES, 0)).toBe(Math.min(4, cores - 1));
    // Only on cores the load leaves free: none when every core is busy.
    expect(readWorkersFor(READ_WORKER_BYTES, cores)).toBe(0);
    expect(readWorkersFor(READ_WORKER_BYTES, cores - 1)).toBe(cores > 1 ? 1 : 0);
    const small = await scan('"plan for step 3"', { bytePass: false });
    expect(small.workers).toBe(0);
  });

  it('once this thread has read its warm-up: a broad query met by its newest sessions starts none', async () => {
    // Any bytes left are worth one worker here, and the warm-up is one session's read.
    const gate = { bytePass: false, readWorkerWarmup: 1, readWorkersFor: () => 1 };
    const narrow = await scan('"plan for step 3"', gate);
    expect(narrow.workers).toBe(1);
    expect(narrow.hits).toEqual((await scan('"plan for step 3"', { bytePass: false, readWorkers: 0 })).hits);
    // The first (newest) session holds more matches than the bound: nothing is left to spread.
    const broad = await scan('module tests', gate, 5);
    expect(broad.read).toBe(1);
    expect(broad.workers).toBe(0);
  });

  it('as TXCRIPT_SCAN_READ_WORKERS says, whatever the size', () => {
    expect(workersFromEnv({ TXCRIPT_SCAN_READ_WORKERS: '0' })).toBe(0);
    expect(workersFromEnv({ TXCRIPT_SCAN_READ_WORKERS: '2' })).toBe(2);
    expect(workersFromEnv({ TXCRIPT_SCAN_READ_WORKERS: 'many' })).toBeUndefined();
    expect(workersFromEnv({})).toBeUndefined();
  });
});

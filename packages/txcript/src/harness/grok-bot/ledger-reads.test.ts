import { copyFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  T0,
  boxPaths,
  ledgerConversation,
  writeLedger,
  writeProfile,
} from '../../../test/fixtures/grok-bot/generate.ts';
import type { BoxPaths } from '../../../test/fixtures/grok-bot/generate.ts';
import {
  WORKER_FILE,
  WORKER_THRESHOLD,
  bundledWorkerUrl,
  ledgerWorkerMode,
  startLedgerReads,
  wantsWorker,
} from './ledger-reads.ts';
import { readLedgerOutcome } from './ledger-facts.ts';
import type { LedgerOutcome, LedgerRequest, LedgerWorkerOptions } from './ledger-reads.ts';
import { discoverGrokBot } from './discover.ts';
import { grokBotRoots } from './roots.ts';

let home: string;
let box: BoxPaths;
let requests: LedgerRequest[];
/** The outcomes of reading every request in-process, one after the other. */
let expected: LedgerOutcome[];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'grok-ledger-reads-'));
  box = boxPaths(home);
  requests = [];
  for (let i = 0; i < WORKER_THRESHOLD + 2; i++) {
    const id = `agent-${i}`;
    writeProfile(box, id, {});
    const path = join(box.agents, id, 'store.db');
    if (i < 2) writeLedger(box, id, ledgerConversation(`question ${i}`));
    else copyFileSync(requests[0]!.path, path); // many ledgers, written fast
    requests.push({ path, needTitle: i % 2 === 0 });
  }
  writeProfile(box, 'agent-corrupt', {});
  const corrupt = join(box.agents, 'agent-corrupt', 'store.db');
  writeFileSync(corrupt, 'not a database, only text\n'.repeat(10));
  requests.push({ path: corrupt, needTitle: true });
  requests.push({ path: join(box.agents, 'agent-gone', 'store.db'), needTitle: true });
  expected = requests.map(readLedgerOutcome);
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A worker script in the temp dir, speaking the protocol of ledger-reads.ts. */
function fakeWorker(body: string): URL {
  const file = join(home, 'fake-worker.mjs');
  writeFileSync(
    file,
    `import { parentPort, workerData as next } from 'node:worker_threads';
parentPort.once('message', (requests) => {
  const claim = () => { const i = Atomics.add(next, 0, 1); return i < requests.length ? i : undefined; };
  ${body}
});
`,
  );
  return pathToFileURL(file);
}

function readAll(list: readonly LedgerRequest[], options: LedgerWorkerOptions, onRead?: () => void) {
  const reads = startLedgerReads(list.length, options);
  reads.request(list);
  return reads.finish(onRead);
}

describe('ledger reads', () => {
  it('reads facts, a failure and a missing ledger the same on every path, in request order', async () => {
    expect(expected[0]).toEqual({ facts: { messages: 3, lastActivityMs: T0 + 1000, title: 'question 0' } });
    expect(expected[1]).toEqual({ facts: { messages: 3, lastActivityMs: T0 + 1000 } });
    const corrupt = expected.at(-2)!;
    expect('error' in corrupt && corrupt.error).toMatch(/agent-corrupt.*not a SQLite database/);
    expect(expected.at(-1)).toEqual({ facts: undefined });
    let reads = 0;
    const off = await readAll(requests, { mode: 'off' }, () => reads++);
    expect(off).toEqual({ outcomes: expected, warnings: [] });
    expect(reads).toBe(requests.length);
  });

  it('takes the outcomes a worker reports for the ledgers it claims', async () => {
    // A worker that claims everything and reports made-up facts: they must be the ones returned.
    const url = fakeWorker(`
for (let i = claim(); i !== undefined; i = claim()) parentPort.postMessage([[i, { facts: { messages: 1000 + i } }]]);`);
    let reads = 0;
    const on = await readAll(requests, { mode: 'on', url }, () => reads++);
    expect(on.outcomes).toEqual(requests.map((_, i) => ({ facts: { messages: 1000 + i } })));
    expect(on.warnings).toEqual([]);
    expect(reads).toBe(requests.length);
    // Started on request when fewer reads were expected.
    const late = startLedgerReads(0, { mode: 'on', url });
    late.request(requests);
    expect((await late.finish()).outcomes).toEqual(on.outcomes);
    // Nothing to read: no outcome, no warning.
    const none = startLedgerReads(requests.length, { mode: 'on', url });
    none.request([]);
    expect(await none.finish()).toEqual({ outcomes: [], warnings: [] });
  });

  it('reads in-process what a worker claimed but did not report, with a warning in "on" mode only', async () => {
    // Claims everything, reports the first half honestly (made up here), then crashes.
    const crashing = fakeWorker(`
for (let i = claim(); i !== undefined; i = claim()) if (i < 10) parentPort.postMessage([[i, { facts: { messages: 7 } }]]);
throw new Error('worker boom');`);
    const on = await readAll(requests, { mode: 'on', url: crashing });
    expect(on.outcomes.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => ({ facts: { messages: 7 } })));
    expect(on.outcomes.slice(10)).toEqual(expected.slice(10));
    expect(on.warnings).toEqual([
      {
        source: join(home, 'fake-worker.mjs'),
        message: 'ledger worker not used (worker boom); its ledgers were read in-process',
      },
    ]);
    const auto = await readAll(requests, { mode: 'auto', url: crashing });
    expect(auto.outcomes.slice(10)).toEqual(expected.slice(10));
    expect(auto.warnings).toEqual([]);

    // A clean exit with ledgers claimed and unreported is a failure too.
    const quitting = fakeWorker(`parentPort.postMessage([[claim(), { facts: { messages: 7 } }]]); claim();`);
    const quit = await readAll(requests, { mode: 'on', url: quitting });
    expect(quit.outcomes[0]).toEqual({ facts: { messages: 7 } });
    expect(quit.outcomes.slice(1)).toEqual(expected.slice(1));
    expect(quit.warnings[0]?.message).toBe(
      `ledger worker not used (ended without reporting ${requests.length - 1} ledgers); its ledgers were read in-process`,
    );
  });

  it('falls back to in-process reads when the worker script is missing or there is none', async () => {
    const missing = pathToFileURL(join(home, 'no-such-worker.mjs'));
    const on = await readAll(requests, { mode: 'on', url: missing });
    expect(on.outcomes).toEqual(expected);
    expect(on.warnings).toHaveLength(1);
    expect(on.warnings[0]?.source).toBe(join(home, 'no-such-worker.mjs'));
    expect(on.warnings[0]?.message).toMatch(
      /^ledger worker not used \(Cannot find module .*no-such-worker\.mjs/,
    );
    expect(await readAll(requests, { mode: 'auto', url: missing })).toEqual({
      outcomes: expected,
      warnings: [],
    });
    // From the TypeScript sources there is no worker script: "on" says so, "auto" reads in-process.
    expect(bundledWorkerUrl()).toBeUndefined();
    const fromSource = await readAll(requests, { mode: 'on' });
    expect(fromSource.outcomes).toEqual(expected);
    expect(fromSource.warnings).toEqual([
      {
        source: WORKER_FILE,
        message:
          'ledger worker not used (no worker script when running from the TypeScript sources); its ledgers were read in-process',
      },
    ]);
  });

  it('lets discovery list as in-process when the worker fails', async () => {
    const roots = grokBotRoots(box.env);
    const off = await discoverGrokBot(roots, { ledgerWorker: { mode: 'off' } });
    expect(off.sessions).toHaveLength(requests.length - 1); // agent-gone has no folder
    const crashing = fakeWorker(`claim(); claim(); process.exit(3);`);
    const on = await discoverGrokBot(roots, { ledgerWorker: { mode: 'on', url: crashing } });
    expect(on).toEqual({
      sessions: off.sessions,
      warnings: [
        ...off.warnings,
        {
          source: join(home, 'fake-worker.mjs'),
          message: 'ledger worker not used (exited with code 3); its ledgers were read in-process',
        },
      ],
    });
    const missing = pathToFileURL(join(home, 'no-such-worker.mjs'));
    expect(await discoverGrokBot(roots, { ledgerWorker: { mode: 'auto', url: missing } })).toEqual(off);
  });

  it('reads on the calling thread in "auto" mode and does not wait for a worker that claims nothing', async () => {
    // Waiting for it would never end: the test would time out.
    const idle = fakeWorker(`setInterval(() => {}, 60_000);`);
    const auto = await readAll(requests, { mode: 'auto', url: idle });
    expect(auto).toEqual({ outcomes: expected, warnings: [] });
  });

  it('wants a worker from the threshold on in "auto" mode, for any read in "on" mode, never in "off" mode', () => {
    const url = new URL(`file:///app/dist/cli/${WORKER_FILE}`);
    expect(wantsWorker('auto', WORKER_THRESHOLD, url)).toBe(true);
    expect(wantsWorker('auto', WORKER_THRESHOLD - 1, url)).toBe(false);
    expect(wantsWorker('auto', 10_000, undefined)).toBe(false);
    expect(wantsWorker('off', 10_000, url)).toBe(false);
    expect(wantsWorker('on', 1, undefined)).toBe(true);
    expect(wantsWorker('on', 0, url)).toBe(false);
  });

  it('finds the worker script next to the bundle, and reads TXCRIPT_LEDGER_WORKER', () => {
    expect(bundledWorkerUrl('file:///app/dist/cli/txcript.mjs')?.href).toBe(
      `file:///app/dist/cli/${WORKER_FILE}`,
    );
    expect(bundledWorkerUrl('file:///app/src/harness/grok-bot/ledger-reads.ts')).toBeUndefined();
    expect(ledgerWorkerMode({})).toBe('auto');
    expect(ledgerWorkerMode({ TXCRIPT_LEDGER_WORKER: '' })).toBe('auto');
    expect(ledgerWorkerMode({ TXCRIPT_LEDGER_WORKER: '0' })).toBe('off');
    expect(ledgerWorkerMode({ TXCRIPT_LEDGER_WORKER: '1' })).toBe('on');
    expect(ledgerWorkerMode({ TXCRIPT_LEDGER_WORKER: 'yes' })).toBe('auto');
  });
});

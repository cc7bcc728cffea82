/**
 * What `txcript list` loads: only the stores it scans (harness/listing.ts),
 * never a codec, zod, SQLite or the protocol package while every source is
 * served by the summary caches, and no codec even when it reads them all.
 * The CLI runs from the sources in a real process, with a module resolve
 * hook that writes down every module it loads.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../test/run-process.ts';
import { claudeSessionText } from '../../test/fixtures/claude-code/generate.ts';
import { generateBox } from '../../test/fixtures/grok-bot/generate.ts';
import { RACY_WINDOW_MS } from '../harness/summary-cache-file.ts';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const main = fileURLToPath(new URL('./main.ts', import.meta.url));

let home: string;
let written: number;
const SESSION = '3f2a9c1e-5b7d-4e8f-a0c2-6d4b8e1f9a37';

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-list-modules-'));
  // Agents with a transcript and agents with a ledger only (read with SQLite when not cached).
  generateBox(home, { agents: 6, withJsonl: 3, ledgerEntries: 3 });
  const project = join(home, '.claude', 'projects', '-home-dev-app');
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, `${SESSION}.jsonl`),
    claudeSessionText({ sessionId: SESSION, cwd: '/home/dev/app', turns: 3, resultLines: 2, seed: 3 }),
  );
  written = Date.now();
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** Run txcript from the sources; its exit code and the URLs of every module it resolved. */
async function loadedBy(args: string[]): Promise<{ code: number | null; stderr: string; urls: string[] }> {
  const log = join(home, `modules-${args.join('-')}-${Date.now()}.log`);
  const hook = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}`;
  const register = join(home, 'register-hook.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n`,
  );
  writeFileSync(log, '');
  const r = await runProcess(
    process.execPath,
    ['--import', 'tsx/esm', '--import', pathToFileURL(register).href, main, ...args],
    {
      cwd: packageDir,
      env: { PATH: process.env.PATH ?? '', HOME: home, TZ: 'UTC', TXCRIPT_PROGRESS_DELAY_MS: '600000' },
    },
  );
  const urls = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u !== '');
  return { code: r.code, stderr: r.stderr, urls };
}

const CODECS =
  /\/harness\/(?:claude-code\/(?:codec|records)|codex\/codec|grok-bot\/(?:codec|text|gateway))\.ts$/;
const HEAVY = /\/node_modules\/(?:zod|better-sqlite3)\/|\/packages\/protocol\/|\/grok-bot\/ledger-db\.ts$/;

describe('the modules txcript list loads', () => {
  it('reads every source without a codec, and lists from warm caches without zod, SQLite or the protocol', async () => {
    const cold = await loadedBy(['list']);
    expect(cold.stderr).toBe('');
    expect(cold.code).toBe(0);
    // The hook sees what the listing loads: the stores, and SQLite for the ledgers it read.
    expect(cold.urls.some((u) => u.endsWith('/harness/claude-code/store.ts'))).toBe(true);
    expect(cold.urls.some((u) => /\/better-sqlite3\//.test(u))).toBe(true);
    expect(cold.urls.filter((u) => CODECS.test(u))).toEqual([]);

    // Sources changed within the racy window are not remembered: let them age past it, fill the caches.
    const age = Date.now() - written;
    if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
    expect((await loadedBy(['list'])).code).toBe(0);
    const warm = await loadedBy(['list']);
    expect(warm.code).toBe(0);
    expect(warm.urls.filter((u) => CODECS.test(u) || HEAVY.test(u))).toEqual([]);

    // Reading a session is what loads its codec.
    const view = await loadedBy(['view', SESSION]);
    expect(view.code).toBe(0);
    expect(view.urls.some((u) => u.endsWith('/harness/claude-code/codec.ts'))).toBe(true);
  });

  it('searches an index that is up to date without loading the codecs: the stores say nothing changed', async () => {
    const age = Date.now() - written;
    if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
    // The first search reads every session into the index (with their codecs); the next has nothing to read.
    const first = await loadedBy(['search', 'module']);
    expect(first.stderr).toBe('');
    expect(first.urls.some((u) => u.endsWith('/harness/claude-code/codec.ts'))).toBe(true);
    // Reading a ledger the first time may change it (SQLite's first open): past the racy window, it is known.
    await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100));
    const warm = await loadedBy(['search', 'module']);
    expect(warm.code, warm.stderr).toBe(0);

    console.log(
      'LOADED',
      warm.urls
        .filter((u) => u.includes('node_modules'))
        .slice(0, 15)
        .join('\n'),
    );
    // Not the registry (every codec), nor the row maker: what the stores list is all it needs.
    expect(
      warm.urls.filter((u) => CODECS.test(u) || /\/(?:harness\/catalog|search\/documents)\.ts$/.test(u)),
    ).toEqual([]);
  });
});

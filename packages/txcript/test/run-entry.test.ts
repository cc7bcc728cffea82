/**
 * bin/run-entry.mjs in a real process: it bundles an entry with txcript's
 * worker scripts next to the bundle, and counts the bundle as fresh only
 * while every one of them is there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_FILE } from '../src/harness/grok-bot/ledger-reads.ts';

const runEntryUrl = new URL('../bin/run-entry.mjs', import.meta.url).href;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txcript-run-entry-'));
  writeFileSync(join(dir, 'entry.ts'), 'export const answer: number = 6 * 7;\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Run the entry through runEntry in a fresh process; its `answer`. */
function run(): string {
  const options = { entry: join(dir, 'entry.ts'), bundle: join(dir, 'dist', 'entry.mjs'), packages: [] };
  const script = `import { runEntry } from ${JSON.stringify(runEntryUrl)};
const m = await runEntry(${JSON.stringify(options)});
process.stdout.write(String(m.answer));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', HOME: dir },
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  return r.stdout;
}

const inode = (path: string): bigint => statSync(path, { bigint: true }).ino;

describe('run-entry', () => {
  it('builds the worker scripts next to the bundle, and rebuilds when one is missing', () => {
    const bundle = join(dir, 'dist', 'entry.mjs');
    const worker = join(dir, 'dist', WORKER_FILE);
    expect(run()).toBe('42');
    expect(existsSync(bundle)).toBe(true);
    expect(existsSync(worker)).toBe(true);
    const built = inode(bundle);
    expect(run()).toBe('42');
    expect(inode(bundle)).toBe(built); // fresh: not rebuilt
    rmSync(worker);
    expect(run()).toBe('42');
    expect(existsSync(worker)).toBe(true);
    expect(inode(bundle)).not.toBe(built); // rebuilt with its worker
  });
});

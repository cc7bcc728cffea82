/**
 * Stat signatures on real files: nanosecond and millisecond times, what
 * changes them, and the racy window.
 */
import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RACY_WINDOW_MS, statSignature } from './summary-cache-file.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txcript-stat-signature-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('statSignature', () => {
  it('gives the times in nanoseconds by default, or as the milliseconds of a plain stat', () => {
    const file = join(dir, 'a.jsonl');
    writeFileSync(file, 'one\n');
    const ns = statSync(file, { bigint: true });
    const ms = statSync(file);
    const now = Date.now();
    expect(statSignature(file, now, { ctime: true })?.sig).toBe(
      `${ns.dev}:${ns.ino}:${ns.size}:${ns.mtimeNs}:${ns.ctimeNs}`,
    );
    expect(statSignature(file, now, { ctime: true, times: 'ms' })?.sig).toBe(
      `${ms.dev}:${ms.ino}:${ms.size}:${ms.mtimeMs}:${ms.ctimeMs}`,
    );
    expect(statSignature(file, now, { ctime: false, times: 'ms' })?.sig).toBe(
      `${ms.dev}:${ms.ino}:${ms.size}:${ms.mtimeMs}`,
    );
    expect(statSignature(join(dir, 'missing'), now, { ctime: true, times: 'ms' })).toBeUndefined();
  });

  it('changes in either unit when the content changes at the same size, and is racy while recent', () => {
    const file = join(dir, 'b.jsonl');
    writeFileSync(file, 'one\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const now = Date.now();
    const before = {
      ns: statSignature(file, now, { ctime: false }),
      ms: statSignature(file, now, { ctime: false, times: 'ms' }),
    };
    // Only the mtime says when: the ctime of a file just touched is now.
    expect([before.ns?.racy, before.ms?.racy]).toEqual([false, false]);
    expect(statSignature(file, now, { ctime: true, times: 'ms' })?.racy).toBe(true);
    expect(statSignature(file, now + RACY_WINDOW_MS + 1, { ctime: true, times: 'ms' })?.racy).toBe(false);

    writeFileSync(file, 'two\n');
    const after = {
      ns: statSignature(file, Date.now(), { ctime: false }),
      ms: statSignature(file, Date.now(), { ctime: false, times: 'ms' }),
    };
    expect(after.ns?.sig).not.toBe(before.ns?.sig);
    expect(after.ms?.sig).not.toBe(before.ms?.sig);
    expect([after.ns?.racy, after.ms?.racy]).toEqual([true, true]);
  });
});

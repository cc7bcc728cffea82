/** Warnings met while listing are shown once per file and message per day; --quiet shows none. */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SHOW_AGAIN_AFTER_MS, shownWarnings } from './shown-warnings.ts';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'shown-warnings-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const bad = { source: '/data/broken.jsonl', message: 'not JSON at line 3' };
const T = Date.parse('2026-12-05T10:00:00Z');

async function run(
  at: number,
  env: NodeJS.ProcessEnv = { HOME: home },
  warnings = [bad],
): Promise<boolean[]> {
  const shown = shownWarnings(env, () => new Date(at));
  const out = warnings.map((w) => shown.show(w));
  await shown.save();
  return out;
}

describe('shown warnings', () => {
  it('shows a warning once per day across runs, and again after a day', async () => {
    expect(await run(T)).toEqual([true]);
    expect(await run(T + 60_000)).toEqual([false]);
    expect(await run(T + SHOW_AGAIN_AFTER_MS - 1)).toEqual([false]);
    expect(await run(T + SHOW_AGAIN_AFTER_MS)).toEqual([true]);
  });

  it('tells files and messages apart, and repeats none within one run', async () => {
    const other = { source: '/data/other.jsonl', message: bad.message };
    const worse = { source: bad.source, message: 'not JSON at line 9' };
    expect(await run(T, { HOME: home }, [bad, bad, other, worse])).toEqual([true, false, true, true]);
  });

  it('keeps its memory private in the cache folder', async () => {
    await run(T);
    const dir = join(home, '.cache', 'txcript');
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const file = join(dir, 'shown-warnings-v1.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // Keys are hashes: no path or message text is stored.
    expect(await readFile(file, 'utf8')).not.toContain('broken');
  });

  it('remembers nothing without a home, with caching off, or when the memory is damaged', async () => {
    expect(await run(T, {})).toEqual([true]);
    expect(await run(T, {})).toEqual([true]);
    expect(await run(T, { HOME: home, TXCRIPT_NO_CACHE: '1' })).toEqual([true]);
    expect(await run(T, { HOME: home, TXCRIPT_NO_CACHE: '1' })).toEqual([true]);
    await run(T);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(home, '.cache', 'txcript', 'shown-warnings-v1.json'), '{not json');
    expect(await run(T + 1)).toEqual([true]);
  });
});

import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLineWindow } from './line-window.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-window-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function windowOf(
  text: string,
  start: number,
  limit: number | undefined,
  cap: number,
  chunk: number,
): Promise<string | null> {
  const file = path.join(dir, 'f.txt');
  await writeFile(file, text);
  const handle = await open(file, 'r');
  try {
    return await readLineWindow(handle, start, limit, cap, chunk);
  } finally {
    await handle.close();
  }
}

describe('readLineWindow', () => {
  it('is exactly split / slice / join, whatever the chunk size (characters split between chunks too)', async () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\r', ' '), maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 8 }).map((lines) => lines.join('\n')),
        fc.nat(10),
        fc.option(fc.nat(10), { nil: undefined }),
        fc.integer({ min: 1, max: 9 }),
        async (text, start, limit, chunk) => {
          const lines = text.split('\n');
          const expected = lines.slice(start, limit === undefined ? undefined : start + limit).join('\n');
          expect(await windowOf(text, start, limit, 1 << 20, chunk)).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives up (null) once the window passes the cap, and not before', async () => {
    expect(await windowOf('abc\ndef\nghi', 0, 2, 7, 2)).toBe('abc\ndef');
    expect(await windowOf('abc\ndef\nghi', 0, 2, 6, 2)).toBeNull();
    expect(await windowOf('abc\ndef\nghi', 1, undefined, 7, 4)).toBe('def\nghi');
  });
});

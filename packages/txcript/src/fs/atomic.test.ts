import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFileAtomic, FileExistsError, writeFileAtomic } from './atomic.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-atomic-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('createFileAtomic', () => {
  it('creates missing folders and the file, leaving no temp file', async () => {
    const target = path.join(dir, 'a', 'b', 's.jsonl');
    await createFileAtomic(target, 'first\n');
    expect(await fs.readFile(target, 'utf8')).toBe('first\n');
    expect(await fs.readdir(path.dirname(target))).toEqual(['s.jsonl']);
  });

  it('refuses to replace a file that exists, and leaves it as it was', async () => {
    const target = path.join(dir, 's.jsonl');
    await fs.writeFile(target, 'first\n');
    const refused = createFileAtomic(target, 'second\n');
    await expect(refused).rejects.toBeInstanceOf(FileExistsError);
    await expect(refused).rejects.toThrow(/refusing to overwrite the existing file .*s\.jsonl/);
    expect(await fs.readFile(target, 'utf8')).toBe('first\n');
    expect(await fs.readdir(dir)).toEqual(['s.jsonl']);
  });
});

describe('writeFileAtomic', () => {
  it('replaces a file whole and leaves no temp file', async () => {
    const target = path.join(dir, 'out.txt');
    await fs.writeFile(target, 'old');
    await writeFileAtomic(target, 'new text');
    expect(await fs.readFile(target, 'utf8')).toBe('new text');
    expect(await fs.readdir(dir)).toEqual(['out.txt']);
  });

  it('gives the new file the mode asked for, even when it replaces a wider one', async () => {
    const target = path.join(dir, 'private.json');
    await fs.writeFile(target, 'old', { mode: 0o644 });
    await writeFileAtomic(target, 'secret', { mode: 0o600 });
    expect((await fs.stat(target)).mode & 0o777).toBe(0o600);
    expect(await fs.readFile(target, 'utf8')).toBe('secret');
  });

  it('fsyncs the file and its folder unless durable: false (a cache), and moves it into place either way', async () => {
    const probe = await fs.open(path.join(dir, 'probe'), 'w');
    const handle = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    await fs.rm(path.join(dir, 'probe'));
    const sync = vi.spyOn(handle, 'sync');
    try {
      await writeFileAtomic(path.join(dir, 'durable.json'), 'a');
      expect(sync).toHaveBeenCalledTimes(2); // the temp file, then the folder after the rename
      sync.mockClear();
      await fs.writeFile(path.join(dir, 'cache.json'), 'old');
      await writeFileAtomic(path.join(dir, 'cache.json'), 'new', { durable: false });
      expect(sync).not.toHaveBeenCalled();
      expect(await fs.readFile(path.join(dir, 'cache.json'), 'utf8')).toBe('new');
      expect((await fs.readdir(dir)).sort()).toEqual(['cache.json', 'durable.json']);
    } finally {
      sync.mockRestore();
    }
  });

  it('writes text given in pieces, and replaces the target only once the last piece is written', async () => {
    const target = path.join(dir, 'export.json');
    await fs.writeFile(target, 'old');
    const seen: string[] = [];
    function* pieces(): Generator<string> {
      for (let i = 0; i < 3000; i++) {
        // While pieces are still being made, the target is the old file.
        if (i % 1000 === 999) seen.push(readFileSync(target, 'utf8'));
        yield `{"i":${i},"t":"é✓"}\n`;
      }
    }
    await writeFileAtomic(target, pieces());
    expect(seen).toEqual(['old', 'old', 'old']);
    const expected = Array.from({ length: 3000 }, (_, i) => `{"i":${i},"t":"é✓"}\n`).join('');
    expect(await fs.readFile(target, 'utf8')).toBe(expected);
    expect(await fs.readdir(dir)).toEqual(['export.json']);
  });

  it('leaves the target as it was, and no temp file, when making a piece fails', async () => {
    const target = path.join(dir, 'export.json');
    await fs.writeFile(target, 'old');
    function* pieces(): Generator<string> {
      yield 'x'.repeat(3 << 20);
      throw new Error('the codec gave up');
    }
    await expect(writeFileAtomic(target, pieces())).rejects.toThrow('the codec gave up');
    expect(await fs.readFile(target, 'utf8')).toBe('old');
    expect(await fs.readdir(dir)).toEqual(['export.json']);
  });

  it('fails without touching anything when the folder does not exist', async () => {
    await expect(writeFileAtomic(path.join(dir, 'missing', 'out.txt'), 'x')).rejects.toThrow(/ENOENT/);
    expect(await fs.readdir(dir)).toEqual([]);
  });
});

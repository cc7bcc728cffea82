import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

  it('fails without touching anything when the folder does not exist', async () => {
    await expect(writeFileAtomic(path.join(dir, 'missing', 'out.txt'), 'x')).rejects.toThrow(/ENOENT/);
    expect(await fs.readdir(dir)).toEqual([]);
  });
});

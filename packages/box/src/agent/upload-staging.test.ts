import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AttachmentStore } from '../attachments/store.ts';
import { noScrub } from '../secrets/scrub.ts';
import { safeUploadName, stageUpload } from './upload-staging.ts';

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

describe('staging an upload', () => {
  it('makes a plain name of what the client sent', () => {
    expect(safeUploadName('a/b\\c')).toBe('a_b_c');
    expect(safeUploadName('..secret')).toBe('_secret');
    expect(safeUploadName('')).toBe('upload');
  });

  it('picks the first free name in the folder', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-upload-'));
    const store = new AttachmentStore(path.join(dir, 'attachments'), 1024);
    await mkdir(path.join(dir, 'uploads'));
    await writeFile(path.join(dir, 'uploads', 'notes.txt'), '');
    await writeFile(path.join(dir, 'uploads', 'notes (1).txt'), '');
    const staged = await stageUpload(store, dir, 'notes.txt', Buffer.from('x'), noScrub);
    expect(staged.sandboxPath).toBe(path.join(dir, 'uploads', 'notes (2).txt'));
  });

  it('stores the bytes in the attachment store and in the sandbox uploads folder', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-upload-'));
    const sandbox = path.join(dir, 'sandbox');
    await mkdir(sandbox);
    const store = new AttachmentStore(path.join(dir, 'attachments'), 1024);
    const staged = await stageUpload(store, sandbox, 'notes.txt', Buffer.from('hello'), noScrub);
    expect(staged.sandboxPath).toBe(path.join(sandbox, 'uploads', 'notes.txt'));
    expect(await readFile(staged.sandboxPath, 'utf8')).toBe('hello');
    expect(await readFile(staged.stored.path, 'utf8')).toBe('hello');
    await expect(stageUpload(store, sandbox, 'big.bin', Buffer.alloc(2048), noScrub)).rejects.toMatchObject({
      status: 413,
    });
  });
});

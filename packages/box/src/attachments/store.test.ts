import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AttachmentStore, AttachmentTooLargeError } from './store.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-cas-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('AttachmentStore', () => {
  it('stores a file under its SHA-256 with name, size and media type', async () => {
    const src = path.join(dir, 'report.pdf');
    await writeFile(src, 'pdf bytes');
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    const file = await store.ingestFile(src);
    const sha = createHash('sha256').update('pdf bytes').digest('hex');
    expect(file).toMatchObject({
      fileName: 'report.pdf',
      size: 9,
      mediaType: 'application/pdf',
      sha256: sha,
      created: true,
    });
    expect(path.basename(file.path)).toBe(`${sha}.pdf`);
    expect(await readFile(file.path, 'utf8')).toBe('pdf bytes');
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
  });

  it('stores identical files once, whatever their names', async () => {
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    await writeFile(path.join(dir, 'a.txt'), 'same');
    await writeFile(path.join(dir, 'b.md'), 'same');
    const first = await store.ingestFile(path.join(dir, 'a.txt'));
    const second = await store.ingestFile(path.join(dir, 'b.md'));
    expect(second.created).toBe(false);
    expect(second.path).toBe(first.path);
    expect(second.fileName).toBe('b.md');
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([path.basename(first.path)]);
  });

  it('refuses a file over the size cap and leaves no temp file', async () => {
    const store = new AttachmentStore(path.join(dir, 'attachments'), 4);
    await expect(store.ingestBytes(new Uint8Array(5), 'big.bin')).rejects.toBeInstanceOf(
      AttachmentTooLargeError,
    );
    await expect(store.ingest([new Uint8Array(3), new Uint8Array(3)], 'streamed.bin')).rejects.toThrow(
      /attachment limit/,
    );
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([]);
  });
});

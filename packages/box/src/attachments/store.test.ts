import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scrubberFor, SecretInFileError } from '../secrets/scrub.ts';
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
    const kept = await store.ingestBytes(new Uint8Array(4), 'four.bin');
    await expect(store.ingestBytes(new Uint8Array(5), 'big.bin')).rejects.toBeInstanceOf(
      AttachmentTooLargeError,
    );
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([path.basename(kept.path)]);
    await writeFile(path.join(dir, 'five.bin'), '12345');
    await expect(store.ingestFile(path.join(dir, 'five.bin'))).rejects.toBeInstanceOf(
      AttachmentTooLargeError,
    );
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([path.basename(kept.path)]);
  });

  it('keeps a stored copy private whatever the mode of its source', async () => {
    const src = path.join(dir, 'tool.sh');
    await writeFile(src, '#!/bin/sh\necho hi\n');
    await chmod(src, 0o755);
    const file = await new AttachmentStore(path.join(dir, 'attachments')).ingestFile(src);
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
  });

  it('tells large files of the same size apart, and stores a repeat of one once', async () => {
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    const size = 1024 * 1024 + 7; // above the size where the store looks for a stored file of that size
    const one = Buffer.alloc(size, 1);
    const two = Buffer.alloc(size, 2);
    await writeFile(path.join(dir, 'one.bin'), one);
    await writeFile(path.join(dir, 'two.bin'), two);
    await writeFile(path.join(dir, 'one-again.bin'), one);
    const first = await store.ingestFile(path.join(dir, 'one.bin'));
    const second = await store.ingestFile(path.join(dir, 'two.bin'));
    const again = await store.ingestFile(path.join(dir, 'one-again.bin'));
    expect(first).toMatchObject({ created: true, size, sha256: sha(one) });
    expect(second).toMatchObject({ created: true, size, sha256: sha(two) });
    expect(again).toMatchObject({ created: false, size, sha256: sha(one), path: first.path });
    expect(sha(await readFile(second.path))).toBe(sha(two));
    expect((await readdir(path.join(dir, 'attachments'))).sort()).toEqual(
      [path.basename(first.path), path.basename(second.path)].sort(),
    );
  });

  it('stores uploaded bytes under their hash, once', async () => {
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    const bytes = new TextEncoder().encode('uploaded');
    const first = await store.ingestBytes(bytes, 'u.txt');
    const again = await store.ingestBytes(bytes, 'u-copy.txt');
    expect(first).toMatchObject({ created: true, sha256: sha(bytes), size: bytes.byteLength });
    expect(again).toMatchObject({ created: false, path: first.path });
    expect(await readFile(first.path, 'utf8')).toBe('uploaded');
    expect((await stat(first.path)).mode & 0o777).toBe(0o600);
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([path.basename(first.path)]);
  });

  it('refuses a FIFO at once and never follows a link', async () => {
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    const fifo = path.join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    await expect(store.ingestFile(fifo)).rejects.toThrow('pipe is not a regular file');
    await writeFile(path.join(dir, 'real.txt'), 'x');
    await symlink(path.join(dir, 'real.txt'), path.join(dir, 'link.txt'));
    await expect(store.ingestFile(path.join(dir, 'link.txt'))).rejects.toMatchObject({ code: 'ELOOP' });
  });

  it('refuses a file holding a secret, in every way it can arrive, and keeps no copy', async () => {
    const secrets = scrubberFor(new Map([['API_KEY', 'sk-very-secret-value']]));
    const store = new AttachmentStore(path.join(dir, 'attachments'));
    const encoded = Buffer.from(`data ${Buffer.from('sk-very-secret-value').toString('base64')} end`);
    const src = path.join(dir, 'dump.txt');
    await writeFile(src, encoded);
    await expect(store.ingestFile(src, 'dump.txt', { secrets })).rejects.toBeInstanceOf(SecretInFileError);
    await expect(store.ingestBytes(encoded, 'dump.txt', { secrets })).rejects.toThrow(
      'dump.txt contains the secret API_KEY',
    );
    expect(await readdir(path.join(dir, 'attachments'))).toEqual([]);
    // Without secrets configured the same bytes are an ordinary file.
    await expect(store.ingestBytes(encoded, 'dump.txt')).resolves.toMatchObject({ created: true });
  });
});

function sha(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

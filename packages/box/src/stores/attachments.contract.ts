/** The AttachmentsStore contract: every backend's attachment store passes it (run by stores/files/attachments.test.ts). */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scrubberFor } from '../secrets/scrub.ts';
import type { AttachmentsStore } from './attachments.ts';
import { useBackend, type Backend } from './contract.ts';

/** A backend's attachment store, and a way to read a stored file back by what `ingest*` returned. */
export interface AttachmentsUnderTest {
  store: AttachmentsStore;
  readBack: (path: string) => Promise<Uint8Array>;
}

export function attachmentsContract(backend: string, make: Backend<AttachmentsUnderTest>): void {
  describe(`AttachmentsStore contract (${backend})`, () => {
    const open = useBackend(make);

    it('stores bytes once per SHA-256, named by it, with the media type of the file name', async () => {
      const { store, readBack } = await open();
      const bytes = new TextEncoder().encode('hello attachments');
      const first = await store.ingestBytes(bytes, 'note.txt');
      expect(first).toMatchObject({
        fileName: 'note.txt',
        size: bytes.byteLength,
        mediaType: 'text/plain',
        sha256: createHash('sha256').update(bytes).digest('hex'),
        created: true,
      });
      expect(first.path).toContain(first.sha256);
      expect(Buffer.from(await readBack(first.path)).toString()).toBe('hello attachments');
      const again = await store.ingestBytes(bytes, 'copy.txt');
      expect(again).toMatchObject({ path: first.path, sha256: first.sha256, created: false });
    });

    it('refuses a file over its size cap, and one holding a secret', async () => {
      const { store } = await open();
      await expect(store.ingestBytes(new Uint8Array(store.maxBytes + 1), 'big.bin')).rejects.toThrow(
        /larger than the .* attachment limit/,
      );
      const secrets = scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']]));
      await expect(
        store.ingestBytes(new TextEncoder().encode('key=tok-0123456789'), 'leak.txt', { secrets }),
      ).rejects.toThrow(/API_TOKEN/);
    });
  });
}

/**
 * The bytes of a file edit changes, read into a buffer that the next edit reuses. Read into a fresh
 * 1 MB Buffer each time (and written from a fresh concatenation), an edit left about 3 MB of memory
 * outside V8's heap behind it, and every ~30 edits that memory made V8 run a full collection, which
 * took the slowest edits from 3 ms to 40–85 ms (bench/work-tools.ts). A kept buffer makes an edit
 * of a file up to KEEP_MAX_BYTES allocate nothing of the file's size.
 */
import type { FileHandle } from 'node:fs/promises';

/** Buffers at most this large are kept for the next edit; larger files get a buffer of their own. */
const KEEP_MAX_BYTES = 4 * 1024 * 1024;
/** How many buffers are kept (edits of different agents may run at once). */
const KEEP_MAX = 2;
const kept: Buffer[] = [];

export interface FileBytes {
  /** The file's bytes (a view of the buffer: valid until `release`). */
  bytes: Buffer;
  /** Gives the buffer back; `bytes` must not be used after. */
  release(): void;
}

/** Reads the whole file behind `handle`, whose size was `size` when it was opened. */
export async function readFileBytes(handle: FileHandle, size: number): Promise<FileBytes> {
  const index = kept.findIndex((buffer) => buffer.length >= size + 1);
  // One byte more than the size, to notice a file that grew since it was opened.
  const buffer = index === -1 ? Buffer.allocUnsafe(size + 1) : kept.splice(index, 1)[0]!;
  const release = () => {
    if (buffer.length <= KEEP_MAX_BYTES && kept.length < KEEP_MAX) kept.push(buffer);
  };
  try {
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, read, size + 1 - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
      if (read > size) {
        // It grew: read it whole the ordinary way.
        release();
        return { bytes: await handle.readFile(), release: () => undefined };
      }
    }
    return { bytes: buffer.subarray(0, read), release };
  } catch (error) {
    release();
    throw error;
  }
}

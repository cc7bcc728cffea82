/**
 * A window of lines read from an open file in chunks, so a window near the
 * start of a huge file costs one chunk, not the whole file in memory. Lines are
 * what `text.split('\n')` gives (a final newline opens an empty last line), and
 * the window is those lines joined with '\n' again, byte for byte. The bytes are
 * decoded once at the end, so a character split between chunks stays whole.
 */
import type { FileHandle } from 'node:fs/promises';

const NEWLINE = 0x0a;
const CHUNK_BYTES = 64 * 1024;

/**
 * Lines `start` (0-based) up to `start + limit` (all the rest without a limit).
 * Null as soon as the window holds more than `capBytes` bytes.
 */
export async function readLineWindow(
  handle: FileHandle,
  start: number,
  limit: number | undefined,
  capBytes: number,
  chunkBytes = CHUNK_BYTES,
): Promise<string | null> {
  const end = limit === undefined ? Infinity : start + limit;
  const chunk = Buffer.allocUnsafe(chunkBytes);
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 0;
  let position = 0;
  while (line < end) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    // The window's bytes in this chunk are one run [from, to): its lines and the newlines between them.
    let from = line >= start ? 0 : -1;
    let to = 0;
    let at = 0;
    while (at < bytesRead && line < end) {
      const newline = data.indexOf(NEWLINE, at);
      if (newline === -1) {
        if (line >= start) to = bytesRead;
        break;
      }
      // The newline joins this line to the next one only when both are in the window.
      if (line >= start) to = line + 1 < end ? newline + 1 : newline;
      line += 1;
      at = newline + 1;
      if (line === start) from = to = at;
    }
    if (from >= 0 && to > from) {
      keptBytes += to - from;
      if (keptBytes > capBytes) return null;
      kept.push(Buffer.from(data.subarray(from, to))); // the chunk buffer is reused by the next read
    }
  }
  return Buffer.concat(kept, keptBytes).toString('utf8');
}

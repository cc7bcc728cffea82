/**
 * Text made in pieces, written in chunks: few large writes instead of one per
 * piece, and never the whole text in memory at once. Each piece is encoded
 * as UTF-8 straight into the chunk, so no joined string is made on the way.
 */

/** The bytes of a chunk (a chunk ends before the piece that would not fit). */
export const CHUNK_BYTES = 1 << 20;

/** The most UTF-8 bytes one UTF-16 code unit takes (a surrogate pair takes 4 for 2 units). */
const MAX_BYTES_PER_UNIT = 3;

/**
 * The UTF-8 bytes of `pieces`, joined, in chunks of at most `size` bytes (a
 * piece bigger than that is a chunk of its own); no empty chunk. A chunk ends
 * between pieces, so it never splits a character.
 *
 * The chunks are views of one buffer, filled again for the next chunk: a
 * chunk's bytes are valid until the next chunk is asked for, so a writer
 * must be done with one (or copy it) before it asks for the next. Fresh
 * memory for every chunk costs more than encoding into it.
 */
export function* utf8Chunks(pieces: Iterable<string>, size: number = CHUNK_BYTES): Generator<Buffer> {
  const chunk = Buffer.allocUnsafeSlow(size);
  let used = 0;
  for (const piece of pieces) {
    const most = piece.length * MAX_BYTES_PER_UNIT;
    if (used + most > size) {
      if (used > 0) {
        yield chunk.subarray(0, used);
        used = 0;
      }
      if (most > size) {
        if (piece !== '') yield Buffer.from(piece, 'utf8');
        continue;
      }
    }
    used += chunk.write(piece, used, 'utf8');
  }
  if (used > 0) yield chunk.subarray(0, used);
}

/**
 * Text made in pieces, written in chunks: few large writes instead of one per
 * piece, and never the whole text in memory at once.
 */

/** About how many characters a chunk holds (a chunk ends at the piece that reaches it). */
export const CHUNK_CHARS = 1 << 20;

/** `pieces` joined into chunks of at least `size` characters, the last one shorter; no empty chunk. */
export function* textChunks(pieces: Iterable<string>, size: number = CHUNK_CHARS): Generator<string> {
  let batch: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    batch.push(piece);
    length += piece.length;
    if (length >= size) {
      yield batch.join('');
      batch = [];
      length = 0;
    }
  }
  if (length > 0) yield batch.join('');
}

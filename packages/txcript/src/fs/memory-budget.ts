/**
 * Whether a transcript file can be loaded within this process's heap.
 * A transcript is read into memory (whole, or line by line where the harness
 * can) and converted to Common in one piece, and
 * V8 ends a process that outgrows its heap with a fatal error that names
 * nothing: refusing up front says what is wrong and what to do.
 */
import { getHeapStatistics } from 'node:v8';

/**
 * Heap taken per byte of a JSONL transcript loaded into Common (measured: a
 * 200 MB Grok Bot JSONL peaks at 2.2–2.5 GB resident in `view` and `export`).
 */
export const HEAP_BYTES_PER_FILE_BYTE = 12;

/**
 * The same for a transcript read line by line (harness `readCommon`), where
 * only Common is held (measured: a 50 MB Claude Code session peaks at about
 * 130 MB resident in `export` and `convert`, some 50 MB of it Node itself).
 */
export const HEAP_BYTES_PER_STREAMED_BYTE = 3;

const MIB = 1024 * 1024;

export class TooLargeToLoadError extends Error {
  override readonly name = 'TooLargeToLoadError';
  /** What is wrong. */
  readonly problem: string;
  /** What to do about it. */
  readonly remedy: string;

  constructor(
    readonly path: string,
    readonly size: number,
    readonly heapLimit: number,
    perByte: number = HEAP_BYTES_PER_FILE_BYTE,
  ) {
    const need = size * perByte;
    // A round number of GiB with room to spare.
    const suggest = Math.ceil((need * 1.25) / (1024 * MIB)) * 1024;
    const problem =
      `the transcript is ${Math.ceil(size / MIB)} MB: loading it takes about ${Math.ceil(need / MIB)} MB ` +
      `of memory, and this Node.js heap stops at ${Math.floor(heapLimit / MIB)} MB`;
    const remedy = `raise the limit (NODE_OPTIONS=--max-old-space-size=${suggest}) and run the command again`;
    super(`${path}: ${problem}; ${remedy}`);
    this.problem = problem;
    this.remedy = remedy;
  }
}

/**
 * The young generation V8 reserves inside `heap_size_limit`: three semi-spaces of 64 MiB on
 * Node 24 by default (a smaller `--max-semi-space-size` makes this count a little cautious). A
 * loaded transcript lives in the old generation, so only what is left after this reserve can
 * hold it: with `--max-old-space-size=48`, `heap_size_limit` is 240 MiB of which 48 can hold data.
 */
export const YOUNG_GENERATION_RESERVE = 192 * MIB;

/** The heap a loaded transcript can use: `heap_size_limit` less the young generation's reserve. */
export function oldGenerationLimit(heapSizeLimit: number = getHeapStatistics().heap_size_limit): number {
  return Math.max(heapSizeLimit - YOUNG_GENERATION_RESERVE, 0);
}

/**
 * Throws TooLargeToLoadError when a file of `size` bytes would not fit in the
 * heap once loaded, at `perByte` bytes of heap per byte of file.
 */
export function assertLoadable(
  path: string,
  size: number,
  heapLimit: number = oldGenerationLimit(),
  perByte: number = HEAP_BYTES_PER_FILE_BYTE,
): void {
  if (size * perByte > heapLimit) throw new TooLargeToLoadError(path, size, heapLimit, perByte);
}

/**
 * `await` on a background command whose process runs on another cluster worker: its output as that
 * worker shared it (shared-output.ts), read from where the model left off, scrubbed here, and
 * tested against a `regex` as it arrives. What the model has read is marked in the shared store, so a
 * later `await` on any worker (this one, a third, or the one running the command) goes on from there.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Scrubber } from '../secrets/scrub.ts';
import type { TaskRecord } from './task-book.ts';
import { settledWithin, type SharedTaskOutput } from './shared-output.ts';

/** Output an `await` shows the model at most (the rest is in the file). */
export const AWAIT_OUTPUT_CAP_BYTES = 64 * 1024;
/** Carried between chunks when a pattern is tested, so a match across a chunk border is found. */
export const PATTERN_OVERLAP_CHARS = 4096;
/** Longest an await waits on the store for the model's read mark (out of reach: output shown again). */
export const SEEN_WAIT_MS = 2_000;
/** Characters dropped where scrubbed output was cut (a secret may have been cut there). */
export const SCRUB_MARGIN = 4096;

/** Whether `pattern` matches `text` once scrubbed: a pattern must not be a way to probe for a secret's value. */
export function matchesScrubbed(pattern: RegExp, text: string, scrubber: Scrubber): boolean {
  pattern.lastIndex = 0;
  return pattern.test(scrubber.text(text));
}

/**
 * Output bytes as the model is shown them: scrubbed; when `cut` (they begin SCRUB_MARGIN bytes
 * before what is shown), the first SCRUB_MARGIN characters dropped, as they may hold the end of a
 * secret cut there.
 */
export function shownText(bytes: Buffer, cut: boolean, scrubber: Scrubber): string {
  const text = scrubber.text(bytes.toString('utf8'));
  return cut ? text.slice(SCRUB_MARGIN) : text;
}

export class OutputElsewhere {
  constructor(
    private readonly shared: SharedTaskOutput,
    private readonly scrubber: () => Scrubber,
  ) {}

  /**
   * A test of the task's output against `pattern`: each call tests what was shared since the last
   * (with the end of the one before, so a match split between two pieces is found).
   */
  scanner(id: string, pattern: RegExp): () => Promise<boolean> {
    let scanned: number | undefined;
    const decoder = new StringDecoder('utf8');
    let carry = '';
    return async () => {
      scanned ??= await this.seen(id);
      const piece = await this.shared.since(id, scanned).catch(() => undefined);
      if (!piece || piece.bytes.length === 0) return false;
      scanned = piece.end;
      const window = carry + decoder.write(piece.bytes);
      carry = window.slice(-PATTERN_OVERLAP_CHARS);
      return matchesScrubbed(pattern, window, this.scrubber());
    };
  }

  /** The last `bytes` bytes of the task's output, raw (empty when none was shared or it cannot be read). */
  async rawTail(id: string, bytes: number): Promise<Buffer> {
    const piece = await this.shared.since(id, 0).catch(() => undefined);
    return piece ? piece.bytes.subarray(-bytes) : Buffer.alloc(0);
  }

  /**
   * The output the model has not seen, its end past AWAIT_OUTPUT_CAP_BYTES; `outputLength`: the
   * output's length shared so far.
   */
  async unseen(record: TaskRecord): Promise<{ output: string; outputLength: number }> {
    const from = await this.seen(record.id);
    const piece = await this.shared.since(record.id, from).catch(() => undefined);
    if (!piece) return { output: '', outputLength: from };
    if (piece.end > from) await this.markSeen(record.id, piece.end);
    const cut = piece.bytes.length > AWAIT_OUTPUT_CAP_BYTES;
    let output = shownText(
      cut ? piece.bytes.subarray(-AWAIT_OUTPUT_CAP_BYTES - SCRUB_MARGIN) : piece.bytes,
      cut,
      this.scrubber(),
    );
    const missed = piece.start - from + (cut ? piece.bytes.length - AWAIT_OUTPUT_CAP_BYTES : 0);
    if (missed > 0) {
      output = `[${missed} earlier bytes not shown: ${record.outputPath ?? 'its output file'} on cluster worker ${record.worker ?? '(unknown)'} holds them]\n${output}`;
    }
    return { output, outputLength: piece.end };
  }

  /** How far the model has read the task's output (0 when the store cannot be read: shown again). */
  seen(id: string): Promise<number> {
    return settledWithin(this.shared.seen(id), SEEN_WAIT_MS, 0);
  }

  /** Records what the model was shown (a store out of reach: a later await may show it again). */
  markSeen(id: string, upTo: number): Promise<void> {
    return settledWithin(this.shared.markSeen(id, upTo), SEEN_WAIT_MS, undefined);
  }
}

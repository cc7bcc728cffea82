/**
 * One session's native text to Common and back, through a harness: streamed
 * (harness `readCommon` / `renderCommon`) when the harness can, else whole
 * (text codec and codec). Every reader and writer of a whole session goes
 * through here, so both ways give the same result.
 */
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  assertLoadable,
  HEAP_BYTES_PER_FILE_BYTE,
  HEAP_BYTES_PER_STREAMED_BYTE,
} from '../fs/memory-budget.ts';
import type { Transcript } from '../model/common.ts';
import { linesOfFile } from './jsonl-file.ts';
import { linesOfText, type LineSource } from './jsonl.ts';
import type { Harness, Warning, WarningContext } from './types.ts';

/** A session's text: a file read as it is needed, or text held whole (stdin). */
export type SessionText = { file: string } | { text: string };

/**
 * The transcript of `input`. The text layer's warnings are returned, in line
 * order; the codec's go to `ctx.onWarning` (as text.parse then
 * codec.toCommon give them). Throws TooLargeToLoadError when a file would
 * not fit in the heap, and what reading, parsing or converting throws.
 */
export async function readSessionText<R>(
  harness: Pick<Harness<R>, 'text' | 'codec' | 'readCommon'>,
  input: SessionText,
  source: string,
  ctx: WarningContext,
): Promise<{ transcript: Transcript; warnings: Warning[] }> {
  const streamed = harness.readCommon !== undefined;
  if ('file' in input)
    assertLoadable(
      input.file,
      // Sync: a scan reads thousands of sessions one after another, and an await here is a thread-pool
      // round trip per session in which this thread idles (about half a scan's wall time on a busy machine).
      statSync(input.file).size,
      undefined,
      streamed ? HEAP_BYTES_PER_STREAMED_BYTE : HEAP_BYTES_PER_FILE_BYTE,
    );
  if (harness.readCommon !== undefined) {
    const lines: LineSource = 'file' in input ? linesOfFile(input.file) : linesOfText(input.text);
    return harness.readCommon(lines, source, ctx);
  }
  const text = 'file' in input ? await readFile(input.file, 'utf8') : input.text;
  const parsed = harness.text.parse(text, source);
  return { transcript: harness.codec.toCommon(parsed.records, ctx), warnings: parsed.warnings };
}

/** The native text of `transcript` in pieces (see Harness `renderCommon`). */
export function renderSessionText(
  harness: Pick<Harness, 'text' | 'codec' | 'renderCommon'>,
  transcript: Transcript,
): Iterable<string> {
  return harness.renderCommon?.(transcript) ?? [harness.text.render(harness.codec.fromCommon(transcript))];
}

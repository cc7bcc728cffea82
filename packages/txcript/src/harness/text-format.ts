/**
 * Which harness's native text a document is, guessed from a sample of it: the harness whose codecs
 * read the most messages from it. Used to say what an input looks like when the harness it was
 * named as reads nothing from it (a wrong `--from`).
 */
import type { Harness } from './types.ts';

/** How much of a file is read to guess its format: enough for the first records of any harness. */
export const SAMPLE_BYTES = 64 * 1024;

/**
 * The first SAMPLE_BYTES of `text`, cut after its last whole line when it is longer (a JSONL format
 * then reads whole records; a one-document format fails to parse, as a cut document should).
 */
export function sampleOf(text: string): string {
  if (text.length <= SAMPLE_BYTES) return text;
  const head = text.slice(0, SAMPLE_BYTES);
  const end = head.lastIndexOf('\n');
  return end < 0 ? head : head.slice(0, end + 1);
}

/** Messages `harness` reads from `sample`, 0 when it cannot read it at all. */
function messagesRead(harness: Harness, sample: string, sessionId: string, timestamp: string): number {
  try {
    const { records } = harness.text.parse(sample, 'sample');
    return harness.codec.toCommon(records, { sessionId, timestamp }).messages.length;
  } catch {
    return 0;
  }
}

/**
 * The harness (other than `except`) whose text `sample` most looks like, or undefined when none of
 * them reads a message from it. Ties go to the earlier harness in `among` (the registry's order).
 */
export function guessTextFormat(
  sample: string,
  among: readonly Harness[],
  except: Harness,
): Harness | undefined {
  let best: { harness: Harness; messages: number } | undefined;
  for (const harness of among) {
    if (harness.id === except.id) continue;
    const messages = messagesRead(harness, sample, 'sample', '1970-01-01T00:00:00Z');
    if (messages > 0 && (best === undefined || messages > best.messages)) best = { harness, messages };
  }
  return best?.harness;
}

/**
 * A command's text written to a stream as it is made, in chunks of UTF-8
 * (fs/text-chunks.ts), waiting for the stream to drain when it asks to, so
 * the whole output is never held at once.
 */
import { utf8Chunks } from '../fs/text-chunks.ts';
import type { OutStream } from './context.ts';

export async function writeText(stream: OutStream, pieces: Iterable<string>): Promise<void> {
  for (const chunk of utf8Chunks(pieces)) {
    if (stream.write(chunk) === false && stream.once !== undefined)
      await new Promise<void>((resolve) => stream.once!('drain', resolve));
  }
}

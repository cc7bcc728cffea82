/**
 * A command's text written to a stream as it is made, in chunks of UTF-8
 * (fs/text-chunks.ts), so the whole output is never held at once. A chunk's
 * bytes are reused for the next one: a Node stream is given each chunk and
 * the next is made once the stream has written it (which also waits for a
 * slow reader); any other stream gets a copy.
 */
import type { Writable } from 'node:stream';
import { utf8Chunks } from '../fs/text-chunks.ts';
import type { OutStream } from './context.ts';

function isNodeStream(stream: OutStream): stream is OutStream & Pick<Writable, 'write'> {
  return typeof (stream as Partial<Writable>).writableLength === 'number';
}

export async function writeText(stream: OutStream, pieces: Iterable<string>): Promise<void> {
  for (const chunk of utf8Chunks(pieces)) {
    if (!isNodeStream(stream)) {
      stream.write(Buffer.from(chunk));
      continue;
    }
    // A failed write is the stream's to report (its 'error' event, e.g. EPIPE): stop writing.
    const written = await new Promise<boolean>((resolve) =>
      stream.write(chunk, (err) => resolve(err === undefined || err === null)),
    );
    if (!written) return;
  }
}

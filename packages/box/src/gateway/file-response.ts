/** Streams an open file as a response, without reading it whole into memory; the stream closes the handle. */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

export interface OpenFile {
  handle: FileHandle;
  size: number;
}

/**
 * The file as the answer to a GET, or its headers alone for a HEAD (the
 * handle is closed at once: a body nobody reads would hold it open). The
 * body is the `size` bytes the headers promise, even when the file grows
 * meanwhile (a sandbox file its agent is writing).
 */
export function fileResponse(
  file: OpenFile,
  mediaType: string,
  headers: Readonly<Record<string, string>> = {},
  method = 'GET',
): Response {
  const init = {
    status: 200,
    headers: { 'Content-Type': mediaType, 'Content-Length': String(file.size), ...headers },
  };
  if (method === 'HEAD' || file.size === 0) {
    void file.handle.close();
    return new Response(method === 'HEAD' ? null : new Uint8Array(0), init);
  }
  const stream = file.handle.createReadStream({ start: 0, end: file.size - 1 });
  return new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, init);
}

/** Streams an open file as a response, without reading it whole into memory; the stream closes the handle. */
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

export interface OpenFile {
  handle: FileHandle;
  size: number;
}

export function fileResponse(
  file: OpenFile,
  mediaType: string,
  headers: Record<string, string> = {},
): Response {
  try {
    const body = Readable.toWeb(file.handle.createReadStream()) as ReadableStream<Uint8Array>;
    return new Response(body, {
      status: 200,
      headers: { 'Content-Type': mediaType, 'Content-Length': String(file.size), ...headers },
    });
  } catch (error) {
    void file.handle.close();
    throw error;
  }
}

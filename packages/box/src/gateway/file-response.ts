/** Streams a file from disk as a response, without reading it whole into memory. */
import fs from 'node:fs';
import { Readable } from 'node:stream';

export async function fileResponse(
  file: string,
  mediaType: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const stat = await fs.promises.stat(file);
  const body = Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>;
  return new Response(body, {
    status: 200,
    headers: { 'Content-Type': mediaType, 'Content-Length': String(stat.size), ...headers },
  });
}

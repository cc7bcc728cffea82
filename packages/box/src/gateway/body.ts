/**
 * Request bodies, read as streams with a hard cap: a client that declares or
 * sends more than the cap gets 413 without the gateway buffering the excess.
 */
import { GatewayError } from './errors.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;
export const UPLOAD_LIMIT = 50 * 1024 * 1024;

function tooLarge(where: string, limit: number): GatewayError {
  return new GatewayError(`${where}: request body is larger than the ${formatBytes(limit)} limit`, 413);
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/** Reads the whole body, refusing it as soon as it exceeds `limit` bytes. */
export async function readCappedBody(request: Request, limit: number, where: string): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(where, limit);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(where, limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Parses a capped JSON body. An empty body reads as `{}` (methods without arguments). */
export async function readJsonBody(request: Request, where: string): Promise<unknown> {
  const bytes = await readCappedBody(request, JSON_BODY_LIMIT, where);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GatewayError(`${where}: the body is not valid JSON (${reason}); send a JSON object`, 400);
  }
}

/**
 * Request bodies, read with a hard cap: a client that declares or sends more than the cap gets 413
 * without the gateway buffering the excess.
 *
 * They are read from Node's request stream itself, not through the web `Request` that
 * @hono/node-server builds on first use of `c.req.raw.body`: that Request, its headers and its
 * web-stream body cost more than the rest of an accept (bench/accept-burst.ts, 500 prompts at once).
 * What is left unread after a 413 is drained (bounded) or the socket closed by @hono/node-server once
 * the response is sent.
 */
import type { IncomingMessage } from 'node:http';
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
export function readCappedBody(request: IncomingMessage, limit: number, where: string): Promise<Uint8Array> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(where, limit));
  if (request.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const stop = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > limit) {
        stop();
        request.pause();
        reject(tooLarge(where, limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => {
      if (request.readableEnded) return onEnd();
      stop();
      reject(new GatewayError(`${where}: the client closed the connection before the body ended`, 400));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Parses a capped JSON body. An empty body reads as `{}` (methods without arguments). */
export async function readJsonBody(request: IncomingMessage, where: string): Promise<unknown> {
  const bytes = await readCappedBody(request, JSON_BODY_LIMIT, where);
  const text = utf8.decode(bytes);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GatewayError(`${where}: the body is not valid JSON (${reason}); send a JSON object`, 400);
  }
}

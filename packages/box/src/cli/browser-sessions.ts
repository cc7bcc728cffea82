/**
 * `sendbox sessions` and `sendbox logout`: the signed-in browsers of a data dir, listed and
 * ended. While a box runs they go through its gateway (bearer token from `gateway.json`), so
 * an ended session stops at once, open event streams included; with no box running, the
 * session book is changed on disk under the data dir's lock, so no box starts meanwhile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readGatewayDescriptor, type GatewayDescriptor } from '../gateway/index.ts';
import { SESSION_IDLE_MS, SessionBook } from '../gateway/session-book.ts';
import { lockDataDir } from './data-dir-lock.ts';

export class BrowserSessionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BrowserSessionsError';
  }
}

const sessionRowSchema = z.object({
  id: z.string(),
  created: z.number(),
  lastSeen: z.number(),
  expires: z.number(),
  browser: z.string(),
});
export type SessionRow = z.infer<typeof sessionRowSchema>;

const listSchema = z.object({ sessions: z.array(sessionRowSchema) });
const revokedSchema = z.object({ revoked: z.array(z.string()) });

/** A JSON method of the running gateway; null when no gateway answers at the address it left. */
async function callGateway(descriptor: GatewayDescriptor, method: string, body: unknown): Promise<unknown> {
  const host = descriptor.host.includes(':') ? `[${descriptor.host}]` : descriptor.host;
  let response: Response;
  try {
    response = await fetch(`http://${host}:${descriptor.port}/api/${method}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${descriptor.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch {
    return null;
  }
  const answer: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (answer as { error?: unknown } | null)?.error;
    throw new BrowserSessionsError(
      `the running box refused ${method} (${response.status}): ${typeof error === 'string' ? error : 'no details'}`,
    );
  }
  return answer;
}

/** Runs `change` on the session book with the data dir locked, so no box runs on it meanwhile. */
async function withBookOffline<T>(dir: string, change: (book: SessionBook) => Promise<T>): Promise<T> {
  if (!fs.existsSync(dir)) {
    throw new BrowserSessionsError(`${dir} does not exist; pass the --data-dir of your box`);
  }
  const lock = await lockDataDir(dir);
  try {
    return await change(await SessionBook.open(dir));
  } finally {
    lock.release();
  }
}

export async function listBrowserSessions(dataDir: string): Promise<SessionRow[]> {
  const dir = path.resolve(dataDir);
  const descriptor = await readGatewayDescriptor(dir);
  if (descriptor !== null) {
    const answer = await callGateway(descriptor, 'listSessions', {});
    if (answer !== null) return listSchema.parse(answer).sessions;
  }
  return withBookOffline(dir, (book) =>
    Promise.resolve(book.list().map((row) => ({ ...row, expires: row.lastSeen + SESSION_IDLE_MS }))),
  );
}

/** Ends the sessions named, or all; resolves to the ids that were ended. */
export async function endBrowserSessions(
  dataDir: string,
  which: 'all' | readonly string[],
): Promise<string[]> {
  const dir = path.resolve(dataDir);
  const descriptor = await readGatewayDescriptor(dir);
  if (descriptor !== null) {
    const answer = await callGateway(
      descriptor,
      'revokeSessions',
      which === 'all' ? { all: true } : { ids: which },
    );
    if (answer !== null) return revokedSchema.parse(answer).revoked;
  }
  return withBookOffline(dir, (book) => book.revoke(which));
}

/** One line per session: `<id>  last used <when>, ends <when>, signed in <when>  <browser>`. */
export function describeSessions(rows: readonly SessionRow[]): string[] {
  if (rows.length === 0) return ['no browser is signed in'];
  const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
  return rows.map(
    (row) =>
      `${row.id}  last used ${when(row.lastSeen)}, ends ${when(row.expires)}, signed in ${when(row.created)}` +
      `  ${row.browser === '' ? '(unknown browser)' : row.browser}`,
  );
}

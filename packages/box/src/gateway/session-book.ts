/**
 * The signed-in browsers: `<data-dir>/sessions.json` (mode 0600, written atomically), one record
 * per browser session with when it began, when it was last used and the browser it came from.
 * A session counts only while its record is here, so revoking one is deleting its record, and
 * `sendbox logout --all` empties the book. The records hold no credential: a cookie and a tab
 * proof are MACs of the id under the session key (session.ts).
 */
import path from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../fs/json-file.ts';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';

/** Idle sessions end after this long; every use moves the end (sliding). */
export const SESSION_IDLE_MS = 7 * 24 * 60 * 60_000;
/** Browsers beyond this many: the one idle longest is dropped (a login loop cannot grow the file). */
export const MAX_SESSIONS = 64;

export const sessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{22}$/, 'expected a session id (22 characters)');

const recordSchema = z.object({
  id: sessionIdSchema,
  created: z.number().int().nonnegative(),
  lastSeen: z.number().int().nonnegative(),
  /** The browser's User-Agent at sign-in, cut to 200 characters: only for telling sessions apart. */
  browser: z.string().max(200),
});
export type SessionRecord = z.infer<typeof recordSchema>;

const fileSchema = z.object({ sessions: z.array(recordSchema) });

export function sessionBookPath(dataDir: string): string {
  return path.join(dataDir, 'sessions.json');
}

/**
 * Where a gateway keeps its signed-in browsers: this file (SessionBook), or, for the gateways of a
 * cluster, a table they share (cluster/session-book.ts).
 */
export interface SessionRecords {
  /** The live session with this id, or null (unknown, revoked or idle too long). */
  live(id: string): SessionRecord | null;
  /** The live sessions, most recently used first. */
  list(): SessionRecord[];
  /** Records a new session; resolves once it is stored. */
  add(record: SessionRecord): Promise<void>;
  /** Moves a session's last use to now. */
  touch(id: string): Promise<void>;
  /** Removes the sessions named (all when 'all'); resolves to the ids removed, once stored. */
  revoke(ids: readonly string[] | 'all'): Promise<string[]>;
  /** True the first time a login code's nonce is redeemed; false for it again until `expires` (ms). */
  claimLoginNonce(nonce: string, expires: number): boolean;
}

export class SessionBook implements SessionRecords {
  readonly #records = new Map<string, SessionRecord>();
  /** Redeemed login nonces until their code expires; later they are refused as expired anyway. */
  readonly #redeemed = new Map<string, number>();
  #writing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: string,
    records: readonly SessionRecord[],
    private readonly now: () => number,
  ) {
    for (const record of records) this.#records.set(record.id, record);
  }

  /** Reads the book; a file that is not one stops the start (it is never overwritten). */
  static async open(dataDir: string, now: () => number = () => Date.now()): Promise<SessionBook> {
    const file = sessionBookPath(dataDir);
    const data = await readJsonFile(
      file,
      fileSchema,
      'is not a list of browser sessions; delete it (every browser will need a new login link) and start again',
    );
    if (data === null) return new SessionBook(file, [], now);
    return new SessionBook(file, data.sessions, now);
  }

  /** The live session with this id, or null (unknown, revoked or idle too long). */
  live(id: string): SessionRecord | null {
    const record = this.#records.get(id);
    return record !== undefined && this.now() < record.lastSeen + SESSION_IDLE_MS ? { ...record } : null;
  }

  /** The live sessions, most recently used first. */
  list(): SessionRecord[] {
    const now = this.now();
    return [...this.#records.values()]
      .filter((record) => now < record.lastSeen + SESSION_IDLE_MS)
      .sort((a, b) => b.lastSeen - a.lastSeen)
      .map((record) => ({ ...record }));
  }

  claimLoginNonce(nonce: string, expires: number): boolean {
    const now = this.now();
    for (const [used, until] of this.#redeemed) if (until < now) this.#redeemed.delete(used);
    if (this.#redeemed.has(nonce)) return false;
    this.#redeemed.set(nonce, expires);
    return true;
  }

  /** Records a new session; resolves once it is on disk. */
  add(record: SessionRecord): Promise<void> {
    return this.#change((records) => {
      records.set(record.id, { ...record });
      const byAge = [...records.values()].sort((a, b) => a.lastSeen - b.lastSeen);
      for (const old of byAge.slice(0, Math.max(0, byAge.length - MAX_SESSIONS))) records.delete(old.id);
    });
  }

  /** Moves a session's last use to `now` (its idle end with it). */
  touch(id: string): Promise<void> {
    const now = this.now();
    return this.#change((records) => {
      const record = records.get(id);
      if (record !== undefined) records.set(id, { ...record, lastSeen: Math.max(record.lastSeen, now) });
    });
  }

  /** Removes the sessions named (all of them when `ids` is 'all'); resolves to the ids removed, once on disk. */
  revoke(ids: readonly string[] | 'all'): Promise<string[]> {
    let removed: string[] = [];
    return this.#change((records) => {
      removed = ids === 'all' ? [...records.keys()] : ids.filter((id) => records.has(id));
      for (const id of removed) records.delete(id);
    }).then(() => removed);
  }

  /**
   * Changes are written one after another; memory changes only once the file is written, so a
   * revoked session never counts again even if the box dies right after answering.
   */
  #change(update: (records: Map<string, SessionRecord>) => void): Promise<void> {
    const done = this.#writing.then(async () => {
      const next = new Map(this.#records);
      update(next);
      const now = this.now();
      for (const [id, record] of next) if (now >= record.lastSeen + SESSION_IDLE_MS) next.delete(id);
      await ensurePrivateDir(path.dirname(this.file));
      await writeFileAtomic(this.file, `${JSON.stringify({ sessions: [...next.values()] }, null, 2)}\n`, {
        mode: 0o600,
      });
      this.#records.clear();
      for (const [id, record] of next) this.#records.set(id, record);
    });
    this.#writing = done.catch(() => undefined);
    return done;
  }
}

/**
 * Browser sessions (docs/gateway.md, "Signing in"). The page never holds the bearer
 * token: a one-time login link starts a session instead, and a session is two halves that
 * only count together:
 *
 * - an HttpOnly cookie `<id>.<mac>`; a browser sends it to every server on the host,
 *   whatever the port, so it alone proves nothing;
 * - the tab proof, a second MAC of the id that the login redirect hands the page in the URL
 *   fragment (never sent to a server) and the page keeps in `sessionStorage` (its own
 *   origin's, port included) and sends as `X-Sendbox-Session` with every API call.
 *
 * - The session key (32 random bytes) is kept in `<data-dir>/session.key`, mode 0600,
 *   created once and never overwritten, so sessions survive a restart of the box.
 *   Deleting the file signs every browser out at the next start.
 * - A session lives while its record is in the session book (session-book.ts) and was used
 *   within SESSION_IDLE_MS; each use moves that end and re-sends the cookie.
 * - A login code is `<expires>.<nonce>.<mac>`, signed under a key derived from the session
 *   key and the running gateway's bearer token. Any process that can read both files
 *   (`sendbox login`) can mint one; it expires after LOGIN_CODE_TTL_MS, it dies with the
 *   gateway instance it was minted for (a restart mints a new token), and the running
 *   gateway redeems each nonce once.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDir, syncDir } from '../fs/atomic.ts';
import { SESSION_IDLE_MS, type SessionRecord, type SessionRecords } from './session-book.ts';

export const LOGIN_CODE_TTL_MS = 5 * 60_000;
/** The header that carries the tab proof; a cross-site form, link or image cannot set it. */
export const SESSION_HEADER = 'x-sendbox-session';
export const LOGIN_PATH = '/login';
/** The fragment parameter of the login redirect that hands the page its tab proof. */
export const TAB_PROOF_FRAGMENT = 'session';
/** A session's last use is written at most this often (the idle end moves with it). */
export const TOUCH_INTERVAL_MS = 10 * 60_000;

const KEY_BYTES = 32;
const ALLOWED_CLOCK_SKEW_MS = 60_000;

export function sessionKeyPath(dataDir: string): string {
  return path.join(dataDir, 'session.key');
}

function parseKey(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64url');
  if (key.length !== KEY_BYTES) {
    throw new Error(
      `${file} does not hold a session key (${KEY_BYTES} bytes, base64url); ` +
        'delete it and restart sendbox (open browser tabs will need a new login link)',
    );
  }
  return key;
}

/** Reads the kept session key; null when there is none yet. */
export async function readSessionKey(dataDir: string): Promise<Buffer | null> {
  const file = sessionKeyPath(dataDir);
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return parseKey(text, file);
}

/**
 * The kept session key, created on first use. The new key is written to a temp file and
 * linked into place, which fails if a key appeared meanwhile: an existing key is never
 * replaced, so a race between two starts cannot sign out the winner's browsers.
 */
export async function loadSessionKey(dataDir: string): Promise<Buffer> {
  const existing = await readSessionKey(dataDir);
  if (existing !== null) return existing;
  await ensurePrivateDir(dataDir);
  const file = sessionKeyPath(dataDir);
  const temp = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  const handle = await fsp.open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${crypto.randomBytes(KEY_BYTES).toString('base64url')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fsp.link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await fsp.rm(temp, { force: true });
  }
  await syncDir(dataDir);
  const key = await readSessionKey(dataDir);
  if (key === null) throw new Error(`${file} vanished while it was being created`);
  return key;
}

function mac(key: Buffer | string, message: string): string {
  return crypto.createHmac('sha256', key).update(message, 'utf8').digest('base64url');
}

function macMatches(expected: string, presented: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

function loginKey(sessionKey: Buffer, gatewayToken: string): Buffer {
  return crypto.createHmac('sha256', sessionKey).update(`sendbox-login-key\n${gatewayToken}`).digest();
}

/** A login code for the gateway whose bearer token is `gatewayToken`. */
export function mintLoginCode(sessionKey: Buffer, gatewayToken: string, now = Date.now()): string {
  const expires = (now + LOGIN_CODE_TTL_MS).toString(36);
  const nonce = crypto.randomBytes(16).toString('base64url');
  return `${expires}.${nonce}.${mac(loginKey(sessionKey, gatewayToken), `login\n${expires}\n${nonce}`)}`;
}

export function loginUrl(gatewayUrl: string, code: string): string {
  return new URL(`${LOGIN_PATH.slice(1)}?code=${encodeURIComponent(code)}`, gatewayUrl).toString();
}

export type Redemption = 'ok' | 'invalid' | 'expired' | 'used';

const CODE = /^[0-9a-z]{1,12}\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{43}$/;
const COOKIE = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const MAX_BROWSER_LENGTH = 200;

/** What a sign-in hands the browser: the cookie to set and the page's tab proof. */
export interface SignIn {
  setCookie: string;
  tabProof: string;
  session: SessionRecord;
}

/**
 * The running gateway's side: redeems login codes once, starts sessions, and checks a
 * request's cookie and tab proof against the session book.
 */
export class BrowserSessions {
  readonly #loginKey: Buffer;
  readonly #revokedListeners = new Set<(ids: readonly string[]) => void>();
  readonly #touching = new Set<string>();
  /** Per data dir, so two boxes on one host (cookies ignore ports) keep their own sessions. */
  readonly cookieName: string;

  constructor(
    private readonly key: Buffer,
    gatewayToken: string,
    private readonly book: SessionRecords,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.#loginKey = loginKey(key, gatewayToken);
    this.cookieName = `sendbox_${mac(key, 'cookie-name').slice(0, 10)}`;
  }

  redeem(code: string): Redemption {
    if (!CODE.test(code)) return 'invalid';
    const [expiresText = '', nonce = '', presented = ''] = code.split('.');
    if (!macMatches(mac(this.#loginKey, `login\n${expiresText}\n${nonce}`), presented)) return 'invalid';
    const expires = parseInt(expiresText, 36);
    const now = this.now();
    if (expires < now || expires > now + LOGIN_CODE_TTL_MS + ALLOWED_CLOCK_SKEW_MS) return 'expired';
    return this.book.claimLoginNonce(nonce, expires) ? 'ok' : 'used';
  }

  /**
   * A session for a browser that redeemed a login code. A browser that still holds a live
   * session keeps it (its other tabs keep working); any other gets a new one.
   */
  async signIn(
    cookieHeader: string | undefined,
    userAgent: string | undefined,
    secure = false,
  ): Promise<SignIn> {
    let session = this.session(cookieHeader);
    if (session === null) {
      const now = this.now();
      session = {
        id: crypto.randomBytes(16).toString('base64url'),
        created: now,
        lastSeen: now,
        browser: (userAgent ?? '').slice(0, MAX_BROWSER_LENGTH),
      };
      await this.book.add(session);
    } else {
      await this.book.touch(session.id);
    }
    return { setCookie: this.#cookie(session.id, secure), tabProof: this.tabProof(session.id), session };
  }

  /** The live session a `Cookie` header names, or null (none, forged, revoked or idle too long). */
  session(cookieHeader: string | undefined): SessionRecord | null {
    const match = COOKIE.exec(cookieValue(cookieHeader, this.cookieName) ?? '');
    if (match === null) return null;
    const [, id = '', presented = ''] = match;
    if (!macMatches(mac(this.key, `session\n${id}`), presented)) return null;
    return this.book.live(id);
  }

  /** The proof the session's tabs send in `X-Sendbox-Session`. */
  tabProof(id: string): string {
    return mac(this.key, `tab\n${id}`);
  }

  /** Whether a request's `X-Sendbox-Session` value is this session's tab proof. */
  proves(session: SessionRecord, presented: string | undefined): boolean {
    return presented !== undefined && macMatches(this.tabProof(session.id), presented);
  }

  /**
   * Records a use of the session. Every TOUCH_INTERVAL_MS the idle end moves and the browser
   * gets the cookie again with a fresh Max-Age (returned); otherwise null.
   */
  async use(session: SessionRecord, secure = false): Promise<string | null> {
    // Parallel requests of one page share the write that is under way.
    if (this.now() - session.lastSeen < TOUCH_INTERVAL_MS || this.#touching.has(session.id)) return null;
    this.#touching.add(session.id);
    try {
      await this.book.touch(session.id);
    } finally {
      this.#touching.delete(session.id);
    }
    return this.#cookie(session.id, secure);
  }

  list(): SessionRecord[] {
    return this.book.list();
  }

  /** Ends sessions; their open event streams are closed by the listeners. */
  async revoke(ids: readonly string[] | 'all'): Promise<string[]> {
    const removed = await this.book.revoke(ids);
    if (removed.length > 0) for (const listener of this.#revokedListeners) listener(removed);
    return removed;
  }

  onRevoked(listener: (ids: readonly string[]) => void): () => void {
    this.#revokedListeners.add(listener);
    return () => this.#revokedListeners.delete(listener);
  }

  /** A `Set-Cookie` value that makes the browser drop the cookie. */
  clearCookie(secure = false): string {
    return `${this.cookieName}=; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}; Max-Age=0`;
  }

  /**
   * `Secure` only for a request that came through the public URL's TLS proxy: on loopback the
   * gateway speaks plain http, where a Secure cookie would never come back.
   */
  #cookie(id: string, secure: boolean): string {
    const value = `${id}.${mac(this.key, `session\n${id}`)}`;
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}; Max-Age=${SESSION_IDLE_MS / 1000}`;
  }
}

function cookieValue(header: string | undefined, name: string): string | null {
  if (header === undefined) return null;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at !== -1 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return null;
}

/**
 * Browser sessions (docs/gateway.md, "Signing in"). The page never holds the bearer
 * token: a one-time login link sets an HttpOnly session cookie instead.
 *
 * - The session key (32 random bytes) is kept in `<data-dir>/session.key`, mode 0600,
 *   created once and never overwritten, so sessions survive a restart of the box.
 *   Deleting the file signs every browser out at the next start.
 * - A session cookie is `<issued>.<id>.<mac>`: HMAC-SHA256 under the session key, valid
 *   for SESSION_TTL_MS from `issued`. Nothing is stored per session.
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

export const LOGIN_CODE_TTL_MS = 5 * 60_000;
export const SESSION_TTL_MS = 30 * 24 * 60 * 60_000;
/** The header the page sends with every API call: a cross-site form or image cannot set it. */
export const REQUEST_HEADER = 'x-sendbox-request';
export const LOGIN_PATH = '/login';

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

const PART = /^[0-9a-z]{1,12}\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{43}$/;

/** The running gateway's side: redeems login codes once and mints and checks session cookies. */
export class BrowserSessions {
  /** Redeemed nonces until their code expires; later they are refused as expired anyway. */
  readonly #redeemed = new Map<string, number>();
  readonly #loginKey: Buffer;
  /** Per data dir, so two boxes on one host (cookies ignore ports) keep their own sessions. */
  readonly cookieName: string;

  constructor(
    private readonly key: Buffer,
    gatewayToken: string,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.#loginKey = loginKey(key, gatewayToken);
    this.cookieName = `sendbox_${mac(key, 'cookie-name').slice(0, 10)}`;
  }

  redeem(code: string): Redemption {
    if (!PART.test(code)) return 'invalid';
    const [expiresText = '', nonce = '', presented = ''] = code.split('.');
    if (!macMatches(mac(this.#loginKey, `login\n${expiresText}\n${nonce}`), presented)) return 'invalid';
    const expires = parseInt(expiresText, 36);
    const now = this.now();
    for (const [used, until] of this.#redeemed) if (until < now) this.#redeemed.delete(used);
    if (expires < now || expires > now + LOGIN_CODE_TTL_MS + ALLOWED_CLOCK_SKEW_MS) return 'expired';
    if (this.#redeemed.has(nonce)) return 'used';
    this.#redeemed.set(nonce, expires);
    return 'ok';
  }

  /** A `Set-Cookie` value for a new session. No `Secure`: the gateway speaks plain http on loopback. */
  newSessionCookie(): string {
    const issued = this.now().toString(36);
    const id = crypto.randomBytes(16).toString('base64url');
    const value = `${issued}.${id}.${mac(this.key, `session\n${issued}\n${id}`)}`;
    return `${this.cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}`;
  }

  /** Whether a `Cookie` header carries a valid, unexpired session of this box. */
  hasSession(cookieHeader: string | undefined): boolean {
    const value = cookieValue(cookieHeader, this.cookieName);
    if (value === null || !PART.test(value)) return false;
    const [issuedText = '', id = '', presented = ''] = value.split('.');
    if (!macMatches(mac(this.key, `session\n${issuedText}\n${id}`), presented)) return false;
    const issued = parseInt(issuedText, 36);
    const now = this.now();
    return issued <= now + ALLOWED_CLOCK_SKEW_MS && now < issued + SESSION_TTL_MS;
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

/**
 * The gateway's bearer token: minted fresh on every start, never stored except
 * in `gateway.json` (mode 0600) and the HTML page the gateway serves itself.
 */
// The default import (the module object) rather than named imports, so a test can
// observe that every comparison goes through `timingSafeEqual`.
import crypto from 'node:crypto';

/** 32 random bytes, base64url: safe in a header, a JSON file and an HTML attribute. */
export function mintToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/**
 * Compares a presented token with the expected one in constant time.
 * Both sides are hashed first, so the comparison runs on equal-length digests
 * and its duration reveals neither the content nor the length of the token.
 */
export function tokenMatches(expected: string, presented: string): boolean {
  const a = crypto.createHash('sha256').update(expected, 'utf8').digest();
  const b = crypto.createHash('sha256').update(presented, 'utf8').digest();
  return crypto.timingSafeEqual(a, b);
}

/** The token from an `Authorization: Bearer <token>` header, or null when the header has another shape. */
export function bearerToken(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return match?.[1] ?? null;
}

/**
 * Session ids as every store sees them: an id names one file or folder under
 * a harness root, so it must be a single path component before any path is
 * built from it; and the UUID form Claude Code and Codex key sessions by.
 */
import { uuidV5 } from '../model/uuid.ts';

/** A refused path or session id. */
export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
}

/** A session id names one folder or file under a root: no separators, no `..`, no NUL, not empty or `.`. */
export function isSafeSessionId(id: string): boolean {
  return (
    id !== '' &&
    id !== '.' &&
    !id.includes('/') &&
    !id.includes('\\') &&
    !id.includes('..') &&
    !id.includes('\0')
  );
}

/** Throws UnsafePathError for an id that could escape its root; `harness` prefixes the message. */
export function assertSafeSessionId(id: string, harness?: string): void {
  if (isSafeSessionId(id)) return;
  throw new UnsafePathError(
    `${harness === undefined ? '' : `${harness}: `}refusing session id ${JSON.stringify(id)}: ` +
      'an id must be a single path component (not empty, no "/", "\\", ".." or NUL). ' +
      'Pass the bare session id as listed by `txcript list`.',
  );
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** Namespace for session ids derived from non-UUID Common ids (fixed, random). */
const SESSION_NS = '5f0c1e7a-93a4-4f4e-9b1d-2f6c8d7e0a31';

/**
 * The UUID a harness that keys sessions by UUID files a Common id under: a
 * Common id that already is one is kept (lower-cased), any other id maps to
 * a stable UUIDv5 of it.
 */
export function sessionUuid(commonId: string): string {
  return isUuid(commonId) ? commonId.toLowerCase() : uuidV5(SESSION_NS, commonId);
}

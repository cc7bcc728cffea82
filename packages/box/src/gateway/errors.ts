/**
 * Every error the gateway answers with is `{error: "..."}` plus a status that
 * fits (docs/gateway.md). Host errors carry their own status; validation errors
 * name the endpoint and the field path; anything else is a 500 whose details go
 * to the log, not to the client.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { HostError } from '../agent/errors.ts';
import { isDiskFullError, StoreWriteError } from '../stores/errors.ts';

export type GatewayStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 423 | 500 | 502 | 503 | 504 | 507;

export class GatewayError extends Error {
  constructor(
    message: string,
    readonly status: GatewayStatus,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export function errorResponse(c: Context, status: ContentfulStatusCode, message: string): Response {
  // A refused body may still be arriving: the connection cannot be reused for another request.
  if (status === 413) c.header('Connection', 'close');
  return c.json({ error: message }, status);
}

/** `createAgent: name: Too small: expected string to have >=1 characters; description: ...` */
export function describeZodError(where: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    return `${path}: ${issue.message}`;
  });
  return `${where}: invalid request: ${issues.join('; ')}`;
}

/**
 * Maps a thrown value onto a response. `report` receives unexpected errors
 * (500s) so the operator sees them; it never receives request bodies.
 */
export function respondWithError(
  c: Context,
  error: unknown,
  report: (message: string) => void,
  diskIsFull: () => boolean = () => false,
): Response {
  if (error instanceof GatewayError || error instanceof HostError) {
    return errorResponse(c, error.status, error.message);
  }
  // A full disk is the operator's to fix, not a fault of the box: 507 Insufficient Storage, saying what was not saved.
  if (error instanceof StoreWriteError && error.diskFull) return errorResponse(c, 507, error.message);
  // Any other write the disk refused (settings, sessions, a folder whose mkdir said ENOENT on a full ext4).
  if (isDiskFullError(error) || (hasErrno(error) && diskIsFull())) {
    const code = (error as { code?: unknown }).code;
    return errorResponse(
      c,
      507,
      `the disk of the data dir is full, so ${c.req.path} was not done (${typeof code === 'string' ? code : 'no space left'}); free some space and try again`,
    );
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  report(`${c.req.method} ${c.req.path} failed: ${detail}`);
  return errorResponse(
    c,
    500,
    `internal error while handling ${c.req.path}; the gateway log has the details`,
  );
}

/** A failure of the system (an errno or SQLite code), not of the box's own logic. */
function hasErrno(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(E[A-Z]+|SQLITE_[A-Z_]+)$/.test(code);
}

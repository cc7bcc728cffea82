/**
 * Request guards that run before any route:
 * - the `Host` header must name the gateway itself, and an `Origin`, when sent,
 *   must be the gateway's own origin (a DNS-rebinding page has neither);
 * - every `/api/*` request carries the bearer token.
 */
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors.ts';
import { bearerToken, tokenMatches } from './token.ts';

/**
 * The `Host` values under which the gateway answers for a loopback bind on `port`.
 * Lower-case; `Host` is compared case-insensitively.
 */
export function loopbackAuthorities(boundHost: string, port: number): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  // A bind on another 127.x address is reachable under that address too.
  names.add(boundHost.includes(':') ? `[${boundHost.toLowerCase()}]` : boundHost.toLowerCase());
  return new Set([...names].map((name) => `${name}:${port}`));
}

export function hostAndOriginGuard(authorities: () => ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const allowed = authorities();
    const host = c.req.header('host')?.toLowerCase();
    if (host === undefined || !allowed.has(host)) {
      return errorResponse(
        c,
        403,
        `refused: Host ${JSON.stringify(host ?? '')} is not this gateway; use http://${[...allowed][0] ?? '127.0.0.1'}/`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !allowed.has(originAuthority(origin) ?? '')) {
      return errorResponse(c, 403, `refused: Origin ${JSON.stringify(origin)} is not this gateway's origin`);
    }
    await next();
  };
}

/** `http://127.0.0.1:1340` → `127.0.0.1:1340`; anything but a plain http origin → null (refused). */
function originAuthority(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' || url.origin === 'null') return null;
  // URL drops the default port; the gateway never listens on 80, so a missing port never matches.
  return url.host.toLowerCase();
}

export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    const presented = bearerToken(c.req.header('authorization'));
    if (presented === null) {
      return errorResponse(
        c,
        401,
        'missing "Authorization: Bearer <token>" header; the token is in <data-dir>/gateway.json',
      );
    }
    if (!tokenMatches(token, presented)) {
      return errorResponse(
        c,
        401,
        'wrong bearer token; the gateway mints a new one on every start, read it again from <data-dir>/gateway.json',
      );
    }
    await next();
  };
}

/**
 * Request guards that run before any route:
 * - the `Host` header must name the gateway itself, and an `Origin`, when sent,
 *   must be the gateway's own origin (a DNS-rebinding page has neither);
 * - every `/api/*` request carries the bearer token (CLI, txcript) or both halves of a
 *   browser session, the cookie and the tab proof, plus the page's CSRF proofs (session.ts).
 */
import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import { errorResponse } from './errors.ts';
import { SESSION_HEADER } from './session.ts';
import type { BrowserSessions } from './session.ts';
import { authorityHost, loopbackHost } from './public-url.ts';
import type { PublicUrl } from './public-url.ts';
import { bearerToken, tokenMatches } from './token.ts';

/**
 * Who the gateway is: the `Host` values it answers to, the origins of its own pages, and the hosts
 * reached through TLS (a `--public-url`'s), whose session cookies are `Secure`. Lower-case.
 */
export interface GatewayAddress {
  readonly hosts: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;
  readonly secureHosts: ReadonlySet<string>;
  /** The origin to point a refused request to: the public one, else the bound loopback one. */
  readonly home: string;
}

/**
 * The address of a gateway bound on `boundHost:port`: its loopback names, the bound address itself
 * when it is one (another 127.x, or with a public URL an interface's address, which is what a proxy
 * that does not forward `Host` sends), and the public URL's host and origin. A wildcard bind
 * (`0.0.0.0`, `::`) is no name: a request must name loopback or the public host.
 */
export function gatewayAddress(boundHost: string, port: number, publicUrl?: PublicUrl): GatewayAddress {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  const bound = boundHost.toLowerCase();
  // A wildcard is no name of its own (loopbackHost maps it away).
  if (loopbackHost(bound) === bound) names.add(authorityHost(bound));
  const loopback = [...names].map((name) => `${name}:${port}`);
  return {
    hosts: new Set([...loopback, ...(publicUrl?.hosts ?? [])]),
    origins: new Set([
      ...loopback.map((authority) => `http://${authority}`),
      ...(publicUrl ? [publicUrl.origin] : []),
    ]),
    secureHosts: new Set(publicUrl?.hosts ?? []),
    home: publicUrl?.origin ?? `http://${authorityHost(loopbackHost(bound))}:${port}`,
  };
}

/** Whether a request came through the public (TLS) host: its cookies must be `Secure`. */
export function viaTls(address: GatewayAddress, hostHeader: string | undefined): boolean {
  return hostHeader !== undefined && address.secureHosts.has(hostHeader.toLowerCase());
}

export function hostAndOriginGuard(address: () => GatewayAddress): MiddlewareHandler {
  return async (c, next) => {
    const { hosts, origins, home } = address();
    const host = c.req.header('host')?.toLowerCase();
    if (host === undefined || !hosts.has(host)) {
      return errorResponse(
        c,
        403,
        `refused: Host ${JSON.stringify(host ?? '')} is not this gateway; use ${home}/`,
      );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.has(originOf(origin) ?? '')) {
      return errorResponse(c, 403, `refused: Origin ${JSON.stringify(origin)} is not this gateway's origin`);
    }
    await next();
  };
}

/** `http://127.0.0.1:1340` as URL normalises it (lower-case, default port dropped); an opaque or bad origin → null. */
function originOf(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin === 'null') return null;
  return url.origin.toLowerCase();
}

/** `loginCommand`: how the user's shell runs `sendbox login` (cli/command-name.ts). */
const signInHint = (loginCommand: string): string =>
  `open the login link \`sendbox serve\` printed, or run \`${loginCommand}\` for a fresh one`;

/** What the auth guard tells the routes: the browser session of the request, null for the bearer token. */
export interface GatewayEnv {
  Variables: { browserSession: string | null };
  /** Node's request and response (@hono/node-server): bodies are read from the request stream (body.ts). */
  Bindings: HttpBindings;
}

/**
 * `Authorization: Bearer <token>` when the header is sent (a wrong token is never
 * rescued by a cookie); otherwise a browser session, which takes both of its halves
 * (session.ts): the cookie, which a browser attaches to any request for this host, and
 * the tab proof in `X-Sendbox-Session`, which only the gateway's own page holds (a
 * cross-site form, link or image cannot set a header, and a cross-site fetch that sets
 * one needs a preflight the gateway never grants). Besides, the gateway's own `Origin`
 * on every request that may change state, and no cross-site `Sec-Fetch-Site`. A session's
 * use keeps it alive (the refreshed cookie rides on the response), and a response to a
 * request whose session ended meanwhile (sign-out) clears the cookie.
 */
export function apiAuth(
  token: string,
  sessions: BrowserSessions,
  address: () => GatewayAddress,
  loginCommand = 'sendbox login',
): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization !== undefined) {
      const presented = bearerToken(authorization);
      if (presented === null) {
        return errorResponse(
          c,
          401,
          'malformed Authorization header; expected "Authorization: Bearer <token>"',
        );
      }
      if (!tokenMatches(token, presented)) {
        return errorResponse(
          c,
          401,
          'wrong bearer token; the gateway mints a new one on every start, read it again from <data-dir>/gateway.json',
        );
      }
      c.set('browserSession', null);
      return next();
    }
    const session = sessions.session(c.req.header('cookie'));
    if (session === null) {
      return errorResponse(
        c,
        401,
        'not signed in: send "Authorization: Bearer <token>" (the token is in <data-dir>/gateway.json), ' +
          `or, in a browser, ${signInHint(loginCommand)}`,
      );
    }
    if (!sessions.proves(session, c.req.header(SESSION_HEADER))) {
      return errorResponse(
        c,
        401,
        `not signed in: a request with the session cookie must carry this tab's session proof (${SESSION_HEADER}), ` +
          `which only a page of this gateway that was signed in holds; ${signInHint(loginCommand)}`,
      );
    }
    const origin = c.req.header('origin');
    const safe = c.req.method === 'GET' || c.req.method === 'HEAD';
    if (origin === undefined ? !safe : !address().origins.has(originOf(origin) ?? '')) {
      return errorResponse(
        c,
        403,
        "refused: a request signed in by cookie must come from the gateway's own page (Origin)",
      );
    }
    const site = c.req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') {
      return errorResponse(c, 403, `refused: a request signed in by cookie came from another site (${site})`);
    }
    const secure = viaTls(address(), c.req.header('host'));
    const refreshed = await sessions.use(session, secure);
    c.set('browserSession', session.id);
    await next();
    if (sessions.session(c.req.header('cookie')) === null)
      c.res.headers.append('Set-Cookie', sessions.clearCookie(secure));
    else if (refreshed !== null) c.res.headers.append('Set-Cookie', refreshed);
  };
}

/**
 * The gateway's routes (docs/gateway.md). Order matters: security headers on
 * everything, then the Host/Origin guard on everything, then the bearer-or-session
 * check on `/api/*`, then the method table. `/login` trades a one-time code for a
 * session cookie; `/` serves the page to a signed-in browser only.
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { z } from 'zod';
import type { AgentHost } from '../host/types.ts';
import { readCappedBody, readJsonBody, UPLOAD_LIMIT } from './body.ts';
import { filesystemIsFull } from '../stores/errors.ts';
import { describeZodError, errorResponse, GatewayError, respondWithError } from './errors.ts';
import { EventStreams, openEventStream } from './events.ts';
import { fileResponse } from './file-response.ts';
import type { AgentFiles } from './files.ts';
import { apiAuth, hostAndOriginGuard, viaTls, type GatewayAddress, type GatewayEnv } from './guards.ts';
import type { ImageHosts } from './image-hosts.ts';
import {
  DEFAULT_IMAGE_LIMITS,
  DEFAULT_IMAGE_POLICY,
  fetchRemoteImage,
  remoteImageUrl,
} from './image-proxy.ts';
import type { ImageFetchLimits, ImageFetchPolicy } from './image-proxy.ts';
import { agentIdSchema, isJsonMethod, jsonMethods, otherRoutes, RawJson } from './methods.ts';
import type { JsonMethodName, MethodContext } from './methods.ts';
import { LOGIN_PATH, TAB_PROOF_FRAGMENT } from './session.ts';
import type { BrowserSessions } from './session.ts';
import type { MessageSearch } from '../search/message-search.ts';
import { PUBLIC_FILES, signInPage, StaticUi } from './static-ui.ts';
import { OAUTH_CALLBACK_PATH } from '../mcp/oauth.ts';
import { oauthCallback } from './oauth-callback.ts';

export interface GatewayAppOptions {
  host: AgentHost;
  token: string;
  sessions: BrowserSessions;
  imageHosts: ImageHosts;
  /** Every agent's messages, searchable (`searchMessages`). */
  search: MessageSearch;
  /** Where remote images may be fetched from (tests play an outside host with it). */
  imagePolicy?: ImageFetchPolicy;
  imageLimits?: ImageFetchLimits;
  /** The `Host` and `Origin` values the gateway answers to (guards.ts `gatewayAddress`). */
  address: () => GatewayAddress;
  /** The data dir: a failed write there on a full disk is 507, whatever its error code. */
  dataDir: string;
  /** The built web UI (`packages/web/dist`). */
  webRoot: string;
  files: AgentFiles;
  version: string;
  /** One line per request: verb, path (no query), status, duration. Never headers or bodies. */
  logRequest?: (line: string) => void;
  /** Unexpected failures (500s). */
  logError: (message: string) => void;
  /** How the user's shell runs `sendbox login` for this box (sign-in page and 401 hints). */
  loginCommand?: string;
}

export interface GatewayApp {
  app: Hono<GatewayEnv>;
  streams: EventStreams;
}

type GatewayContext = Context<GatewayEnv>;

function methodNotAllowed(c: Context, allowed: string): Response {
  c.header('Allow', allowed);
  return errorResponse(c, 405, `${c.req.method} ${c.req.path} is not allowed; use ${allowed}`);
}

/** `after` comes from the query or, on a reconnect, from `Last-Event-ID`. */
const eventsQuerySchema = z.object({
  agentId: agentIdSchema.optional(),
  after: z.coerce.number().int('expected a whole seq number').min(0, 'expected a seq number >= 0').default(0),
});

export function createGatewayApp(options: GatewayAppOptions): GatewayApp {
  const { host, version, files, sessions, imageHosts, search } = options;
  const app = new Hono<GatewayEnv>();
  const streams = new EventStreams();
  // A signed-out browser's open event streams end with its session.
  sessions.onRevoked((ids) => streams.closeSessions(ids));
  const ui = new StaticUi(options.webRoot);
  const fail = (c: Context, error: unknown): Response =>
    respondWithError(c, error, options.logError, () => filesystemIsFull(options.dataDir));

  app.use('*', async (c, next) => {
    const started = performance.now();
    await next();
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
    c.res.headers.set('X-Frame-Options', 'DENY');
    options.logRequest?.(
      `${c.req.method} ${c.req.path} ${c.res.status} ${(performance.now() - started).toFixed(1)}ms`,
    );
  });
  app.use('*', hostAndOriginGuard(options.address));
  app.use('/api/*', apiAuth(options.token, sessions, options.address, options.loginCommand));

  async function runJsonMethod(c: GatewayContext, name: JsonMethodName): Promise<Response> {
    try {
      const body = await readJsonBody(c.env.incoming, name);
      const spec = jsonMethods[name];
      const parsed = spec.input.safeParse(body);
      if (!parsed.success) throw new GatewayError(describeZodError(name, parsed.error), 400);
      // The table pairs each schema with its own handler; TypeScript cannot follow the pairing through the index.
      const run = spec.run as (ctx: MethodContext, input: unknown) => Promise<unknown>;
      const result = await run(
        {
          host,
          version,
          imageHosts,
          sessions,
          search,
          caller: c.get('browserSession'),
          origin: requestOrigin(options.address(), c.req.header('host')),
        },
        parsed.data,
      );
      return result instanceof RawJson
        ? c.body(result.text, 200, { 'Content-Type': 'application/json' })
        : c.json(result);
    } catch (error) {
      return fail(c, error);
    }
  }

  async function uploadFile(c: GatewayContext): Promise<Response> {
    try {
      const agentId = agentIdSchema.safeParse(c.req.header('x-agent-id') ?? '');
      if (!agentId.success) {
        throw new GatewayError(describeZodError('uploadFile: X-Agent-Id', agentId.error), 400);
      }
      const fileName = uploadFileName(c.req.header('x-file-name'));
      const clientNonce = c.req.header('x-client-nonce');
      const bytes = await readCappedBody(c.env.incoming, UPLOAD_LIMIT, 'uploadFile');
      const entry = await host.uploadFile({
        agentId: agentId.data,
        fileName,
        bytes,
        ...(clientNonce === undefined || clientNonce === '' ? {} : { clientNonce }),
      });
      return c.json({ entry });
    } catch (error) {
      return fail(c, error);
    }
  }

  async function events(c: GatewayContext): Promise<Response> {
    try {
      const query = eventsQuerySchema.safeParse({
        agentId: c.req.query('agentId') || undefined,
        after: c.req.query('after') || c.req.header('last-event-id') || undefined,
      });
      if (!query.success) throw new GatewayError(describeZodError('events', query.error), 400);
      const body = await openEventStream(
        host,
        { agentId: query.data.agentId ?? null, after: query.data.after, session: c.get('browserSession') },
        streams,
      );
      return new Response(body, {
        status: 200,
        headers: {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-store',
          'X-Accel-Buffering': 'no',
          // The connection is the stream's alone; when the stream ends, so does the socket.
          Connection: 'close',
        },
      });
    } catch (error) {
      return fail(c, error);
    }
  }

  async function attachment(c: Context): Promise<Response> {
    try {
      const query = z
        .object({
          agentId: agentIdSchema,
          sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lower-case hex digits'),
        })
        .safeParse({ agentId: c.req.query('agentId'), sha256: c.req.query('sha256') });
      if (!query.success) throw new GatewayError(describeZodError('attachment', query.error), 400);
      const file = await files.attachment(query.data.agentId, query.data.sha256);
      return fileResponse(file, file.mediaType, attachmentHeaders(file.fileName));
    } catch (error) {
      return fail(c, error);
    }
  }

  async function upload(c: Context): Promise<Response> {
    try {
      const query = z
        .object({ agentId: agentIdSchema, entryId: z.string().min(1).max(200) })
        .safeParse({ agentId: c.req.query('agentId'), entryId: c.req.query('entryId') });
      if (!query.success) throw new GatewayError(describeZodError('upload', query.error), 400);
      const file = await files.upload(query.data.agentId, query.data.entryId);
      return fileResponse(file, file.mediaType, attachmentHeaders(file.fileName));
    } catch (error) {
      return fail(c, error);
    }
  }

  async function remoteImage(c: Context): Promise<Response> {
    try {
      const image = await fetchRemoteImage(
        remoteImageUrl(c.req.query('url')),
        options.imagePolicy ?? DEFAULT_IMAGE_POLICY,
        options.imageLimits ?? DEFAULT_IMAGE_LIMITS,
      );
      return c.body(new Uint8Array(image.bytes), 200, {
        'Content-Type': image.mediaType,
        'Content-Length': String(image.bytes.length),
        ...servedFileHeaders(),
      });
    } catch (error) {
      return fail(c, error);
    }
  }

  const routes: Record<string, (c: GatewayContext) => Promise<Response>> = {
    uploadFile,
    events,
    attachment,
    upload,
    remoteImage,
  };

  app.all('/api/:method', async (c) => {
    const name = c.req.param('method');
    if (isJsonMethod(name)) {
      return c.req.method === 'POST' ? runJsonMethod(c, name) : methodNotAllowed(c, 'POST');
    }
    const verb = Object.hasOwn(otherRoutes, name) ? otherRoutes[name] : undefined;
    const handler = routes[name];
    if (verb === undefined || handler === undefined) {
      return errorResponse(
        c,
        404,
        `unknown method ${JSON.stringify(name)}; docs/gateway.md lists the methods`,
      );
    }
    return c.req.method === verb ? handler(c) : methodNotAllowed(c, verb);
  });

  // The page holds no secret: a browser with the cookie gets it, and the page then finds its
  // tab proof (in the fragment, its sessionStorage or another tab) before it calls the API.
  const page = (c: Context): Promise<Response> | Response =>
    sessions.session(c.req.header('cookie')) !== null
      ? ui.page(c)
      : signInPage(c, 401, null, options.loginCommand);
  app.get('/', page);
  app.get('/index.html', page);
  app.get(LOGIN_PATH, async (c) => {
    // A HEAD (a link checker, a prefetch) must not spend the code.
    if (c.req.method !== 'GET') return methodNotAllowed(c, 'GET');
    const outcome = sessions.redeem(c.req.query('code') ?? '');
    if (outcome !== 'ok') return signInPage(c, 403, LOGIN_REFUSED[outcome], options.loginCommand);
    try {
      const signIn = await sessions.signIn(
        c.req.header('cookie'),
        c.req.header('user-agent'),
        viaTls(options.address(), c.req.header('host')),
      );
      // 303 to a clean URL: the code leaves the address bar. The tab proof rides in the
      // fragment, which the browser never sends to any server; the page moves it to its
      // sessionStorage and takes it out of the address bar at once.
      return c.body(null, 303, {
        Location: `/#${TAB_PROOF_FRAGMENT}=${signIn.tabProof}`,
        'Set-Cookie': signIn.setCookie,
        'Cache-Control': 'no-store',
      });
    } catch (error) {
      return fail(c, error);
    }
  });
  app.get('/assets/*', (c) => ui.asset(c, c.req.path));
  for (const file of Object.keys(PUBLIC_FILES)) app.get(file, (c) => ui.publicFile(c, file));
  // The MCP servers' OAuth callback: a cross-site navigation from the authorization server, so
  // no session cookie comes with it (SameSite=Strict); the one-time `state` of a connect the
  // signed-in page started is what admits it (mcp/oauth.ts).
  app.get(OAUTH_CALLBACK_PATH, (c) => oauthCallback(c, host));
  app.all('/', (c) => methodNotAllowed(c, 'GET'));

  app.notFound((c) => errorResponse(c, 404, `nothing at ${c.req.path}`));
  app.onError((error, c) => fail(c, error));

  return { app, streams };
}

/** `X-File-Name` is percent-encoded so any Unicode name fits in a header. */
function uploadFileName(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw new GatewayError('uploadFile: missing X-File-Name header (the percent-encoded file name)', 400);
  }
  let name: string;
  try {
    name = decodeURIComponent(header);
  } catch {
    throw new GatewayError('uploadFile: X-File-Name is not valid percent-encoding', 400);
  }
  // A name, not a path: the host stages it inside the agent's folder.
  if (/[/\\\0]/.test(name) || name === '.' || name === '..' || name.trim() === '' || name.length > 255) {
    throw new GatewayError(
      `uploadFile: X-File-Name ${JSON.stringify(name)} is not a plain file name (no "/", "\\", NUL, "." or "..")`,
      400,
    );
  }
  return name;
}

const LOGIN_REFUSED = {
  invalid:
    'This login link is not valid for this sendbox (it was mistyped, or the box has restarted since it was printed).',
  expired: 'This login link has expired.',
  used: 'This login link has been used already.',
} as const;

/** Served files are shown inline but never sniffed or run as a page of this origin. */
function servedFileHeaders(): Record<string, string> {
  return {
    'Content-Security-Policy': "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox",
    'Cache-Control': 'private, max-age=3600',
  };
}

function attachmentHeaders(fileName: string): Record<string, string> {
  return {
    'Content-Disposition': `inline; filename*=UTF-8''${encodeURIComponent(fileName)}`,
    ...servedFileHeaders(),
  };
}

/**
 * The gateway's origin as the caller reached it (the OAuth callback goes back there): https for the
 * public URL's host (TLS ends at the proxy), else the loopback authority the Host guard let through.
 */
function requestOrigin(address: GatewayAddress, host: string | undefined): string {
  if (host === undefined) return address.home;
  return `${viaTls(address, host) ? 'https' : 'http'}://${host.toLowerCase().replace(/:443$/, '')}`;
}

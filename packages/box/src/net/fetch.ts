/**
 * The box's way out over HTTP(S): a `fetch`-compatible client whose every connection is checked
 * by a reach policy (net/reach.ts). An undici dispatcher whose connector checks each host
 * (its pinned, asynchronous lookup for names; the literal itself otherwise), so a redirect to
 * another host is checked again when it connects and a pooled connection is always a checked one.
 * Redirects are followed here, hop by hop, at most `maxRedirects`; the body is capped as it
 * streams; one deadline covers lookups, connects, redirects and the body. Every failure is an
 * OutboundError saying what, which host and why.
 */
import net from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { Deadline } from './deadline.ts';
import { findOutboundError, OutboundError } from './errors.ts';
import { checkHost, checkingLookup, normalizeHost, SYSTEM_NETWORK } from './reach.ts';
import type { NetworkView, ReachPolicy } from './reach.ts';

export interface OutboundLimits {
  /** Most body bytes, declared or streamed (default: no cap). */
  maxBytes?: number;
  /** The whole exchange: lookups, connects, redirects and the body (default: none, so a stream may stay open). */
  timeoutMs?: number;
  /** Each hop until its response head, name lookup and connect included (default 30 s). */
  responseTimeoutMs?: number;
  /** Redirects followed with `redirect: 'follow'`, each hop checked (default 5). */
  maxRedirects?: number;
}

export interface OutboundOptions {
  policy?: ReachPolicy;
  limits?: OutboundLimits;
  /** Name resolution and address rules; default the system's DNS and net/addresses.ts. */
  network?: NetworkView;
}

/** `fetch` as the MCP SDK and other clients take it. */
export type FetchFunction = (input: string | URL, init?: RequestInit) => Promise<Response>;

const DEFAULT_RESPONSE_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
/** Headers that carry the caller's identity: never sent on to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

type Connector = buildConnector.connector;

/** A connector that connects only to hosts `policy` lets through, at the addresses it checked. */
function checkedConnector(policy: ReachPolicy, network: NetworkView, timeoutMs: number): Connector {
  const connect = buildConnector({
    timeout: timeoutMs,
    ...(network.ca === undefined ? {} : { ca: network.ca }),
    lookup: checkingLookup(policy, network),
  });
  return (options, callback) => {
    // An IP literal never reaches a lookup function: check it here, and answer on a later tick too.
    if (net.isIP(normalizeHost(options.hostname)) === 0) return connect(options, callback);
    checkHost(options.hostname, policy, network).then(
      () => connect(options, callback),
      (error: Error) => callback(error, null),
    );
  };
}

/** The URL of one hop, if the box fetches such URLs at all. */
function checkUrl(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError('bad-url', url.host, `only http and https URLs are fetched, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new OutboundError('bad-url', url.host, `a URL with credentials is not fetched (${url.host})`);
  }
}

/** What a failure of one hop was, as an OutboundError. */
function describeFailure(
  error: unknown,
  host: string,
  deadline: Deadline,
  hopTimedOut: string | null,
): OutboundError {
  const known = findOutboundError(error);
  if (known) return known;
  if (deadline.signal.aborted) return deadline.error();
  if (hopTimedOut !== null) return new OutboundError('timeout', host, hopTimedOut);
  let cause: unknown = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  // Happy eyeballs tried several addresses: each one's failure is in the AggregateError.
  const detail =
    cause instanceof AggregateError
      ? (cause.errors as unknown[])
          .map((one) => (one instanceof Error ? one.message : String(one)))
          .join('; ')
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return new OutboundError(
    'unreachable',
    host,
    `cannot fetch from ${host}: ${code !== undefined && !detail.includes(code) ? `${code} ` : ''}${detail}`,
    { cause: error },
  );
}

/** A hop's body as a stream that stops at `maxBytes` and reports failures as OutboundErrors. */
function guardedBody(
  body: ReadableStream<Uint8Array>,
  host: string,
  maxBytes: number,
  deadline: Deadline,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let size = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          deadline.clear();
          controller.close();
          return;
        }
        size += value.byteLength;
        if (size > maxBytes) {
          deadline.clear();
          await reader.cancel().catch(() => undefined);
          controller.error(new OutboundError('too-large', host, `${host} sent more than ${maxBytes} bytes`));
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        deadline.clear();
        controller.error(describeFailure(error, host, deadline, null));
      }
    },
    async cancel(reason) {
      deadline.clear();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/** Where a redirect goes, and how the request changes on the way (the Fetch standard's rules). */
interface NextHop {
  url: URL;
  method: string;
  body: RequestInit['body'];
  headers: Headers;
}

function redirectHop(status: number, location: string, from: URL, hop: NextHop): NextHop {
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    throw new OutboundError('bad-url', from.host, `${from.host} redirects to an invalid URL`);
  }
  checkUrl(url);
  const headers = new Headers(hop.headers);
  if (url.origin !== from.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
  if (status === 303 ? hop.method !== 'HEAD' : (status === 301 || status === 302) && hop.method === 'POST') {
    for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language']) {
      headers.delete(name);
    }
    return { url, method: 'GET', body: null, headers };
  }
  if (hop.body instanceof ReadableStream) {
    throw new OutboundError(
      'bad-url',
      from.host,
      `${from.host} redirects a streamed request body, which cannot be sent again`,
    );
  }
  return { ...hop, url, headers };
}

/**
 * An HTTP(S) client for one reach policy. Keep one per use (the image proxy, web_fetch, one MCP
 * server) and close it when done; its connections are pooled per origin.
 */
export class OutboundClient {
  readonly #agent: Agent;
  readonly #limits: Required<Omit<OutboundLimits, 'timeoutMs'>> & Pick<OutboundLimits, 'timeoutMs'>;

  constructor(options: OutboundOptions = {}) {
    const limits = options.limits ?? {};
    this.#limits = {
      maxBytes: limits.maxBytes ?? Infinity,
      responseTimeoutMs: limits.responseTimeoutMs ?? DEFAULT_RESPONSE_TIMEOUT_MS,
      maxRedirects: limits.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
      ...(limits.timeoutMs === undefined ? {} : { timeoutMs: limits.timeoutMs }),
    };
    this.#agent = new Agent({
      connect: checkedConnector(
        options.policy ?? {},
        options.network ?? SYSTEM_NETWORK,
        this.#limits.responseTimeoutMs,
      ),
      headersTimeout: this.#limits.responseTimeoutMs,
    });
  }

  /** `fetch`, through the policy: rejects with an OutboundError; the body errors with one (too large, timeout). */
  readonly fetch: FetchFunction = async (input, init = {}) => {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new OutboundError('bad-url', '', `${JSON.stringify(String(input))} is not an absolute URL`);
    }
    checkUrl(url);
    const start = url.host;
    const deadline = new Deadline(start, this.#limits.timeoutMs, init.signal ?? undefined);
    let hop: NextHop = {
      url,
      method: (init.method ?? 'GET').toUpperCase(),
      body: init.body ?? null,
      headers: new Headers(init.headers),
    };
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await this.#fetchHop(hop, deadline);
        const location = response.headers.get('location');
        if (REDIRECT_STATUSES.has(response.status) && location !== null && init.redirect !== 'manual') {
          await response.body?.cancel().catch(() => undefined);
          if (init.redirect === 'error') {
            throw new OutboundError(
              'too-many-redirects',
              hop.url.host,
              `${hop.url.host} redirects, and redirects are not followed here`,
            );
          }
          if (redirects >= this.#limits.maxRedirects) {
            throw new OutboundError(
              'too-many-redirects',
              start,
              `more than ${this.#limits.maxRedirects} redirects from ${start}`,
            );
          }
          hop = redirectHop(response.status, location, hop.url, hop);
          continue;
        }
        return this.#finish(response, hop.url, redirects > 0, deadline);
      }
    } catch (error) {
      deadline.clear();
      throw describeFailure(error, hop.url.host, deadline, null);
    }
  };

  async #fetchHop(hop: NextHop, deadline: Deadline): Promise<Awaited<ReturnType<typeof undiciFetch>>> {
    const host = hop.url.host;
    const timeoutMs = this.#limits.responseTimeoutMs;
    const hopController = new AbortController();
    let hopTimedOut: string | null = null;
    const timer = setTimeout(() => {
      hopTimedOut = `${host} did not answer within ${timeoutMs} ms`;
      hopController.abort();
    }, timeoutMs);
    try {
      return await undiciFetch(hop.url, {
        method: hop.method,
        headers: [...hop.headers],
        body: hop.body as never,
        redirect: 'manual',
        dispatcher: this.#agent,
        signal: AbortSignal.any([deadline.signal, hopController.signal]),
        ...(hop.body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
      });
    } catch (error) {
      throw describeFailure(error, host, deadline, hopTimedOut);
    } finally {
      clearTimeout(timer);
    }
  }

  #finish(
    response: Awaited<ReturnType<typeof undiciFetch>>,
    url: URL,
    redirected: boolean,
    deadline: Deadline,
  ): Response {
    const { maxBytes } = this.#limits;
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes && response.headers.get('content-encoding') === null) {
      void response.body?.cancel().catch(() => undefined);
      throw new OutboundError(
        'too-large',
        url.host,
        `${url.host} sends ${declared} bytes, more than ${maxBytes}`,
      );
    }
    const headers = new Headers();
    for (const [name, value] of response.headers) headers.append(name, value);
    const body =
      response.body === null || NULL_BODY_STATUSES.has(response.status)
        ? null
        : guardedBody(response.body as ReadableStream<Uint8Array>, url.host, maxBytes, deadline);
    if (body === null) {
      void response.body?.cancel().catch(() => undefined);
      deadline.clear();
    }
    const result = new Response(body, { status: response.status, statusText: response.statusText, headers });
    Object.defineProperty(result, 'url', { value: url.href });
    Object.defineProperty(result, 'redirected', { value: redirected });
    return result;
  }

  /** Ends every connection at once (pending requests fail). */
  async close(): Promise<void> {
    await this.#agent.destroy();
  }
}

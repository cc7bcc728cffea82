/**
 * `GET /api/remoteImage?url=…`: a remote image fetched once by the gateway on the
 * user's request and served from the box's own origin, so the page's CSP can keep
 * `img-src` to this origin and model output never reaches the network by itself.
 *
 * The fetch is a request the box makes on the user's behalf, so it must not become a
 * way into the user's own network: every hop's host is resolved, each address is
 * checked against the address policy (loopback, private, link-local and other special
 * ranges are refused) and the connection goes to exactly the checked address (no
 * second lookup a rebinding DNS server could answer differently). Redirects are
 * followed by hand, at most MAX_REDIRECTS, each re-checked. No cookies, no credentials,
 * no referrer; only image media types; a byte cap and an overall timeout.
 */
import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from '../net/addresses.ts';
import { GatewayError } from './errors.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Where a host name points and which addresses may be fetched from; tests play an outside host with it. */
export interface ImageFetchPolicy {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
  allowsAddress(address: string, family: 4 | 6): boolean;
  /** Certificate authorities for https, instead of Node's bundled ones (a test's outside https host). */
  ca?: string;
}

export interface ImageFetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageFetchLimits = {
  maxBytes: 10 * 1024 * 1024,
  timeoutMs: 10_000,
  maxRedirects: 3,
};

/** What the page can show (SVG is rasterized there before it is displayed). */
export const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/svg+xml',
]);

export { isPublicAddress };

export const DEFAULT_IMAGE_POLICY: ImageFetchPolicy = {
  async resolve(hostname) {
    const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
    return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  },
  allowsAddress: isPublicAddress,
};

export interface RemoteImage {
  bytes: Buffer;
  mediaType: string;
}

/** Parses and checks the `url` the page asks for. */
export function remoteImageUrl(raw: string | undefined): URL {
  if (raw === undefined || raw === '') {
    throw new GatewayError('remoteImage: missing url (the http or https address of the image)', 400);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GatewayError('remoteImage: url is not an absolute URL', 400);
  }
  checkUrlShape(url);
  return url;
}

function checkUrlShape(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError(`remoteImage: only http and https images are fetched, not ${url.protocol}`, 400);
  }
  if (url.username !== '' || url.password !== '') {
    throw new GatewayError('remoteImage: a URL with credentials is not fetched', 400);
  }
}

/** `promise`, or a rejection once `signal` aborts (a name lookup cannot be cancelled, only abandoned). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The checked addresses of a URL's host, or an error saying which address was refused. */
async function checkedAddresses(
  url: URL,
  policy: ImageFetchPolicy,
  signal: AbortSignal,
): Promise<ResolvedAddress[]> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = net.isIP(hostname);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await untilAborted(policy.resolve(hostname), signal);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new GatewayError(`remoteImage: cannot resolve ${hostname}: ${(error as Error).message}`, 502);
    }
    if (addresses.length === 0) throw new GatewayError(`remoteImage: ${hostname} has no address`, 502);
  }
  const refused = addresses.find(({ address, family }) => !policy.allowsAddress(address, family));
  if (refused !== undefined) {
    throw new GatewayError(
      `remoteImage: refused ${url.host}: it points to ${refused.address}, a loopback, private or reserved address; ` +
        'the image proxy fetches from public addresses only',
      403,
    );
  }
  return addresses;
}

/** A lookup that answers with the addresses already checked, so the connection cannot go elsewhere. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) {
      callback(null, addresses);
    } else {
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    }
  };
}

function requestOnce(
  url: URL,
  addresses: ResolvedAddress[],
  policy: ImageFetchPolicy,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      // No cookies, credentials or referrer: only what a fetch of a public image needs.
      headers: {
        Accept: [...IMAGE_MEDIA_TYPES].join(', '),
        'Accept-Encoding': 'identity',
        'User-Agent': 'sendbox-image-proxy',
      },
      lookup: pinnedLookup(addresses),
      agent: false,
      ...(policy.ca === undefined ? {} : { ca: policy.ca }),
      signal,
    });
    request.once('response', resolve);
    request.once('error', reject);
    request.end();
  });
}

async function readCapped(response: IncomingMessage, maxBytes: number, where: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw new GatewayError(`remoteImage: ${where} is larger than ${maxBytes} bytes`, 413);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Fetches one image, following at most `limits.maxRedirects` redirects, each hop checked. */
export async function fetchRemoteImage(
  start: URL,
  policy: ImageFetchPolicy = DEFAULT_IMAGE_POLICY,
  limits: ImageFetchLimits = DEFAULT_IMAGE_LIMITS,
): Promise<RemoteImage> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    let url = start;
    for (let hop = 0; ; hop++) {
      checkUrlShape(url);
      const addresses = await checkedAddresses(url, policy, controller.signal);
      const response = await requestOnce(url, addresses, policy, controller.signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && location !== undefined) {
        response.resume();
        if (hop >= limits.maxRedirects) {
          throw new GatewayError(
            `remoteImage: more than ${limits.maxRedirects} redirects from ${start.host}`,
            502,
          );
        }
        try {
          url = new URL(location, url);
        } catch {
          throw new GatewayError(`remoteImage: ${url.host} redirects to an invalid URL`, 502);
        }
        continue;
      }
      if (status !== 200) {
        response.resume();
        throw new GatewayError(`remoteImage: ${url.host} answered ${status}`, 502);
      }
      const mediaType = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
        response.resume();
        throw new GatewayError(
          `remoteImage: ${url.host} sent ${JSON.stringify(mediaType || 'no content type')}, not an image ` +
            `(accepted: ${[...IMAGE_MEDIA_TYPES].join(', ')})`,
          415,
        );
      }
      const encoding = response.headers['content-encoding'];
      if (encoding !== undefined && encoding !== 'identity') {
        response.resume();
        throw new GatewayError(`remoteImage: ${url.host} sent an encoded body (${encoding})`, 502);
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        response.destroy();
        throw new GatewayError(`remoteImage: the image is larger than ${limits.maxBytes} bytes`, 413);
      }
      return { bytes: await readCapped(response, limits.maxBytes, 'the image'), mediaType };
    }
  } catch (error) {
    if (controller.signal.aborted) {
      throw new GatewayError(
        `remoteImage: ${start.host} did not send the image within ${limits.timeoutMs} ms`,
        504,
      );
    }
    if (error instanceof GatewayError) throw error;
    throw new GatewayError(
      `remoteImage: fetching from ${start.host} failed: ${(error as Error).message}`,
      502,
    );
  } finally {
    clearTimeout(timer);
  }
}

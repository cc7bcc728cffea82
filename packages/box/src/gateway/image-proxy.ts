/**
 * `GET /api/remoteImage?url=…`: a remote image fetched once by the gateway on the
 * user's request and served from the box's own origin, so the page's CSP can keep
 * `img-src` to this origin and model output never reaches the network by itself.
 *
 * The fetch is a request the box makes on the user's behalf, so it must not become a
 * way into the user's own network: it goes through the outbound module (net/fetch.ts)
 * with the default reach policy, public addresses only, every hop checked and pinned.
 * No cookies, no credentials, no referrer; only image media types; a byte cap, at most
 * three redirects and one deadline for the whole fetch.
 */
import { OutboundClient } from '../net/fetch.ts';
import { OutboundError } from '../net/errors.ts';
import type { OutboundFailure } from '../net/errors.ts';
import { SYSTEM_NETWORK } from '../net/reach.ts';
import type { NetworkView } from '../net/reach.ts';
import { GatewayError } from './errors.ts';
import type { GatewayStatus } from './errors.ts';

/** Where names point and what an address is (net/reach.ts); tests play an outside host with it. */
export type ImageFetchPolicy = NetworkView;

export const DEFAULT_IMAGE_POLICY: ImageFetchPolicy = SYSTEM_NETWORK;

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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new GatewayError(`remoteImage: only http and https images are fetched, not ${url.protocol}`, 400);
  }
  if (url.username !== '' || url.password !== '') {
    throw new GatewayError('remoteImage: a URL with credentials is not fetched', 400);
  }
  return url;
}

const STATUS_OF_FAILURE: Record<OutboundFailure, GatewayStatus> = {
  'bad-url': 400,
  refused: 403,
  unresolved: 502,
  unreachable: 502,
  timeout: 504,
  'too-large': 413,
  'too-many-redirects': 502,
  aborted: 504,
};

function gatewayError(error: unknown, start: URL, limits: ImageFetchLimits): GatewayError {
  if (error instanceof GatewayError) return error;
  if (!(error instanceof OutboundError)) {
    return new GatewayError(`remoteImage: fetching from ${start.host} failed: ${String(error)}`, 502);
  }
  const status = STATUS_OF_FAILURE[error.failure];
  switch (error.failure) {
    case 'refused':
      return new GatewayError(
        `remoteImage: ${error.message}; the image proxy fetches from public addresses only`,
        status,
      );
    case 'timeout':
    case 'aborted':
      return new GatewayError(
        `remoteImage: ${start.host} did not send the image within ${limits.timeoutMs} ms`,
        status,
      );
    case 'too-large':
      return new GatewayError(`remoteImage: the image is larger than ${limits.maxBytes} bytes`, status);
    case 'bad-url':
    case 'unresolved':
    case 'unreachable':
    case 'too-many-redirects':
      return new GatewayError(`remoteImage: ${error.message}`, status);
  }
}

/** Fetches one image through the outbound module: every hop checked, capped in bytes, redirects and time. */
export async function fetchRemoteImage(
  start: URL,
  policy: ImageFetchPolicy = DEFAULT_IMAGE_POLICY,
  limits: ImageFetchLimits = DEFAULT_IMAGE_LIMITS,
): Promise<RemoteImage> {
  const client = new OutboundClient({
    network: policy,
    limits: {
      maxBytes: limits.maxBytes,
      timeoutMs: limits.timeoutMs,
      responseTimeoutMs: limits.timeoutMs,
      maxRedirects: limits.maxRedirects,
    },
  });
  try {
    const response = await client.fetch(start, {
      // No cookies, credentials or referrer: only what a fetch of a public image needs.
      headers: {
        Accept: [...IMAGE_MEDIA_TYPES].join(', '),
        'Accept-Encoding': 'identity',
        'User-Agent': 'sendbox-image-proxy',
      },
    });
    const where = new URL(response.url).host;
    if (response.status !== 200) {
      throw new GatewayError(`remoteImage: ${where} answered ${response.status}`, 502);
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!IMAGE_MEDIA_TYPES.has(mediaType)) {
      throw new GatewayError(
        `remoteImage: ${where} sent ${JSON.stringify(mediaType || 'no content type')}, not an image ` +
          `(accepted: ${[...IMAGE_MEDIA_TYPES].join(', ')})`,
        415,
      );
    }
    const encoding = response.headers.get('content-encoding');
    if (encoding !== null && encoding !== 'identity') {
      throw new GatewayError(`remoteImage: ${where} sent an encoded body (${encoding})`, 502);
    }
    return { bytes: Buffer.from(await response.arrayBuffer()), mediaType };
  } catch (error) {
    throw gatewayError(error, start, limits);
  } finally {
    await client.close();
  }
}

/**
 * The page fetch `web_fetch` uses: the outbound module's client (net/fetch.ts), so every
 * connection, redirect hops included, is checked against the address rules (net/addresses.ts:
 * no loopback, private, link-local or metadata address) and pinned to the address checked. The
 * operator may let named private hosts through (an intranet wiki):
 * `SENDBOX_WEB_ALLOW_PRIVATE_HOSTS=host1,10.0.0.7`, host names or IP literals, loopback ones too.
 */
import { OutboundClient } from '../../net/fetch.ts';
import { parseHostList } from '../../net/reach.ts';
import { WEB_FETCH_TIMEOUT_MS, type PageFetch } from './index.ts';

export interface PageFetcher {
  fetch: PageFetch;
  close(): Promise<void>;
}

/** Throws a message naming the bad entry when the allow-list is malformed. */
export function pageFetcher(
  allowPrivateHosts: string | undefined,
  timeoutMs = WEB_FETCH_TIMEOUT_MS,
): PageFetcher {
  const client = new OutboundClient({
    policy: { trustedHosts: parseHostList(allowPrivateHosts, 'SENDBOX_WEB_ALLOW_PRIVATE_HOSTS') },
    // The download cap is web_fetch's own (a larger page is cut, not refused).
    limits: { timeoutMs, responseTimeoutMs: timeoutMs, maxRedirects: 5 },
  });
  return { fetch: (url, init) => client.fetch(url, init), close: () => client.close() };
}

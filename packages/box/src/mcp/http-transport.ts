/**
 * A remote MCP server (`{url, headers}` in mcp.json): the SDK's Streamable HTTP client transport,
 * falling back to the older HTTP+SSE transport when the server answers the first POST with a 4xx
 * other than 401/403 (an SSE-only server has no POST at its URL), or SSE only with
 * `transport: "sse"`. Every request goes through the box's outbound client (net/fetch.ts) with
 * its address rules: a loopback or private server needs the operator's `allowPrivateHost`.
 * `${secret:NAME}` in headers is filled in from the box secrets here, and nowhere else.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchFunction } from '../net/fetch.ts';
import { missingSecretsProblem, resolveSecrets, type HttpServerConfig } from './config.ts';
import type { TransportPlan } from './connection.ts';

export interface HttpLaunch {
  server: string;
  config: HttpServerConfig;
  boxSecrets: ReadonlyMap<string, string>;
  fetch: FetchFunction;
  /** OAuth for the server (absent when its headers carry their own Authorization). */
  authProvider?: OAuthClientProvider;
}

/** Whether the config's headers authorize by themselves (then the box runs no OAuth for it). */
export function hasOwnAuthorization(config: HttpServerConfig): boolean {
  return Object.keys(config.headers).some((name) => name.toLowerCase() === 'authorization');
}

export function httpTransport(launch: HttpLaunch): TransportPlan {
  const { config } = launch;
  const headers = resolveSecrets(config.headers, launch.boxSecrets);
  if ('missing' in headers) return { refused: missingSecretsProblem(launch.server, headers.missing) };
  const url = new URL(config.url);
  const common = {
    fetch: launch.fetch,
    requestInit: { headers: headers.values },
    ...(launch.authProvider ? { authProvider: launch.authProvider } : {}),
  };
  const sse = () => new SSEClientTransport(url, common);
  if (config.transport === 'sse') return { transport: sse() };
  return {
    transport: new StreamableHTTPClientTransport(url, common),
    ...(config.transport === 'streamable-http'
      ? {}
      : { fallback: (error) => (olderServer(error) ? sse() : null) }),
  };
}

/** A Streamable HTTP refusal that means "not a Streamable HTTP endpoint" (the spec's fallback rule). */
function olderServer(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError) || error.code === undefined) return false;
  return error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
}

/**
 * The local Grok Bot gateway (grok-bot-format.md §8–§9): every call is
 * `POST /api/<method>` with a Bearer token and a JSON body; a non-2xx status
 * or an `{error}` body is a failure (TX-c).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { JsonValue } from '../../model/common.ts';
import { grokBotRoots } from './roots.ts';

export interface GatewayConfig {
  /** e.g. `http://127.0.0.1:1340` (no trailing slash). */
  baseUrl: string;
  token: string;
  /** Where the config came from: the gateway.json path, or the env variable names. */
  source: string;
}

/** `none`: no gateway.json and no environment pair, so there is no gateway to ask at all. */
export type GatewayErrorKind =
  'none' | 'config' | 'unreachable' | 'timeout' | 'auth' | 'http' | 'bad-response' | 'error-body';

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    message: string,
    readonly kind: GatewayErrorKind,
    /** The URL called, or the config file / env names for `config` errors. */
    readonly endpoint: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

const gatewayFileSchema = z.looseObject({
  host: z.string().min(1).optional(),
  port: z.union([z.number().int().min(1).max(65535), z.string().regex(/^\d+$/)]),
  token: z.string().min(1),
});

export const DEFAULT_GATEWAY_TIMEOUT_MS = 5000;

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * `TXCRIPT_GROK_BOT_GATEWAY` as a base URL. txcript documents `host:port`, with an optional
 * `http://`; a trailing slash is allowed. Anything else is a `config` error naming the variable.
 */
export function gatewayUrlFromEnv(value: string): string {
  const raw = value.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {
    url = undefined;
  }
  const plain =
    url !== undefined &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.hostname !== '' &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    (url.pathname === '/' || url.pathname === '');
  if (url === undefined || !plain) {
    throw new GatewayError(
      `TXCRIPT_GROK_BOT_GATEWAY=${JSON.stringify(value)} is not a gateway address: ` +
        'give host:port (for example 127.0.0.1:1340), optionally with http://',
      'config',
      'TXCRIPT_GROK_BOT_GATEWAY',
    );
  }
  return trimSlash(`${url.protocol}//${url.host}`);
}

/**
 * The gateway address and token: `TXCRIPT_GROK_BOT_GATEWAY` (`host:port`, see gatewayUrlFromEnv) and
 * `TXCRIPT_GROK_BOT_TOKEN` override `<agent-data>/gateway.json` `{host?, port, token}`.
 * Throws a `config` GatewayError saying what is missing or malformed.
 */
export async function readGatewayConfig(env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  const file = grokBotRoots(env).gatewayFile;
  const envUrl = env.TXCRIPT_GROK_BOT_GATEWAY ? gatewayUrlFromEnv(env.TXCRIPT_GROK_BOT_GATEWAY) : undefined;
  const envToken = env.TXCRIPT_GROK_BOT_TOKEN || undefined;
  if (envUrl !== undefined && envToken !== undefined) {
    return {
      baseUrl: envUrl,
      token: envToken,
      source: 'TXCRIPT_GROK_BOT_GATEWAY + TXCRIPT_GROK_BOT_TOKEN',
    };
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw code === 'ENOENT'
      ? new GatewayError(
          `no gateway configured: ${file} does not exist and TXCRIPT_GROK_BOT_GATEWAY + TXCRIPT_GROK_BOT_TOKEN are not both set`,
          'none',
          file,
        )
      : new GatewayError(`cannot read ${file}: ${(e as Error).message}`, 'config', file);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new GatewayError(`${file} is not valid JSON: ${(e as Error).message}`, 'config', file);
  }
  const parsed = gatewayFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError(
      `${file}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'} (expected {host?, port, token})`,
      'config',
      file,
    );
  }
  const { host = '127.0.0.1', port, token } = parsed.data;
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    baseUrl: envUrl ?? `http://${hostPart}:${port}`,
    token: envToken ?? token,
    source: file,
  };
}

export interface GatewayClientOptions {
  baseUrl: string;
  token: string;
  /** Per-call limit covering connect, response and body. Default 5000 ms. */
  timeoutMs?: number;
}

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let depth = 0; depth < 4 && typeof cur === 'object' && cur !== null; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function snippet(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  return t.length > 200 ? `${t.slice(0, 200)}…` : t;
}

/** A small client for the local gateway. */
export class GatewayClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  private readonly token: string;

  constructor(options: GatewayClientOptions) {
    this.baseUrl = trimSlash(options.baseUrl);
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS;
  }

  static async fromEnv(env: NodeJS.ProcessEnv = process.env, timeoutMs?: number): Promise<GatewayClient> {
    const config = await readGatewayConfig(env);
    return new GatewayClient({ ...config, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  }

  /** The URL of a method, e.g. `http://127.0.0.1:1340/api/openAgent`. */
  endpoint(method: string): string {
    return `${this.baseUrl}/api/${method}`;
  }

  /** POST a JSON body to `/api/<method>`; resolves with the decoded JSON response. */
  async call(method: string, body: JsonValue): Promise<JsonValue> {
    const url = this.endpoint(method);
    const where = `POST ${url}`;
    let text: string;
    let status: number;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      text = await response.text();
    } catch (e) {
      const name = (e as { name?: unknown }).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        throw new GatewayError(`${where}: no response within ${this.timeoutMs} ms`, 'timeout', url);
      }
      const code = errorCode(e);
      throw new GatewayError(
        `${where}: gateway unreachable${code !== undefined ? ` (${code})` : ''}; is the box running?`,
        'unreachable',
        url,
      );
    }
    if (status === 401 || status === 403) {
      throw new GatewayError(
        `${where}: the gateway rejected the token (HTTP ${status}); check gateway.json or TXCRIPT_GROK_BOT_TOKEN`,
        'auth',
        url,
        status,
      );
    }
    if (status < 200 || status >= 300) {
      throw new GatewayError(`${where}: HTTP ${status}: ${snippet(text)}`, 'http', url, status);
    }
    let json: JsonValue;
    try {
      json = JSON.parse(text) as JsonValue;
    } catch {
      throw new GatewayError(`${where}: response is not JSON: ${snippet(text)}`, 'bad-response', url, status);
    }
    if (typeof json === 'object' && json !== null && !Array.isArray(json) && json.error !== undefined) {
      const err = json.error;
      const detail = typeof err === 'string' ? err : JSON.stringify(err);
      throw new GatewayError(
        `${where}: the gateway answered with an error: ${detail}`,
        'error-body',
        url,
        status,
      );
    }
    return json;
  }
}

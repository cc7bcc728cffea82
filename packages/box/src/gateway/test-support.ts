/**
 * Test helpers for the gateway suites: a real host on a temp data dir with a
 * model the test drives, a gateway on an ephemeral loopback port, and small
 * HTTP and SSE clients. Only the model is scripted.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AgentHostOptions } from '../host/agent-host.ts';
import type { AgentHost } from '../host/types.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { ModelProvider } from '../providers/types.ts';
import { agentFiles, boxAgentFolders } from './files.ts';
import { startGateway } from './server.ts';
import type { GatewayOptions, RunningGateway } from './server.ts';
import { openTestHost } from './test-host.ts';

export interface TestBox {
  dataDir: string;
  webRoot: string;
  host: AgentHost;
  gateway: RunningGateway;
  requestLog: string[];
  errorLog: string[];
  /** POST /api/<method> with the token; returns status and parsed JSON. */
  call(method: string, body?: unknown, init?: RequestInit): Promise<{ status: number; body: unknown }>;
  api(method: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export async function makeTempDir(prefix: string): Promise<string> {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** A stand-in for `packages/web/dist`: an index page and one asset. */
export async function makeWebRoot(): Promise<string> {
  const root = await makeTempDir('sendbox-web-');
  await fs.promises.mkdir(path.join(root, 'assets'));
  await fs.promises.writeFile(
    path.join(root, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8">' +
      '<script type="module" src="/assets/app.js"></script></head><body></body></html>',
  );
  await fs.promises.writeFile(path.join(root, 'assets', 'app.js'), 'console.log("ui");\n');
  return root;
}

export async function startTestBox(
  model: ModelProvider,
  options: Pick<GatewayOptions, 'imagePolicy' | 'imageLimits'> & {
    webRoot?: string;
    hostOptions?: Partial<AgentHostOptions>;
  } = {},
): Promise<TestBox> {
  const dataDir = await makeTempDir('sendbox-gw-');
  const ownWebRoot = options.webRoot === undefined;
  const webRoot = options.webRoot ?? (await makeWebRoot());
  const host = await openTestHost(dataDir, model, options.hostOptions);
  const requestLog: string[] = [];
  const errorLog: string[] = [];
  const gateway = await startGateway({
    host,
    files: agentFiles(host, boxAgentFolders(dataDir)),
    dataDir,
    webRoot,
    version: '0.0.0-test',
    port: 0,
    logRequest: (line) => requestLog.push(line),
    logError: (line) => errorLog.push(line),
    ...(options.imagePolicy ? { imagePolicy: options.imagePolicy } : {}),
    ...(options.imageLimits ? { imageLimits: options.imageLimits } : {}),
  });
  const api = (method: string, init: RequestInit = {}): Promise<Response> =>
    fetch(new URL(`api/${method}`, gateway.url), {
      ...init,
      headers: { Authorization: `Bearer ${gateway.token}`, ...(init.headers as Record<string, string>) },
    });
  return {
    dataDir,
    webRoot,
    host,
    gateway,
    requestLog,
    errorLog,
    api,
    async call(method, body = {}, init = {}) {
      const response = await api(method, { method: 'POST', body: JSON.stringify(body), ...init });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    async close() {
      await gateway.close();
      await host.close();
      await fs.promises.rm(dataDir, { recursive: true, force: true });
      if (ownWebRoot) await fs.promises.rm(webRoot, { recursive: true, force: true });
    },
  };
}

export interface SignIn {
  status: number;
  location: string | null;
  /** The whole `Set-Cookie` header, flags included. */
  setCookie: string;
  /** `name=value`, as a browser sends it back. */
  cookie: string;
  /** The tab proof the redirect hands the page in its fragment (`/#session=<proof>`); '' when none. */
  tabProof: string;
}

/**
 * Opens a login link as a browser would (without following the redirect), sending the cookie it
 * already holds if any, and reads the cookie and tab proof it gets.
 */
export async function openLoginLink(link: string, cookie?: string, userAgent?: string): Promise<SignIn> {
  const headers: Record<string, string> = {};
  if (cookie !== undefined) headers.Cookie = cookie;
  if (userAgent !== undefined) headers['User-Agent'] = userAgent;
  const response = await fetch(link, { redirect: 'manual', headers });
  await response.body?.cancel();
  const setCookie = response.headers.get('set-cookie') ?? '';
  const location = response.headers.get('location');
  return {
    status: response.status,
    location,
    setCookie,
    cookie: setCookie.split(';')[0] ?? '',
    tabProof: /#session=([\w-]+)$/.exec(location ?? '')?.[1] ?? '',
  };
}

/** The headers the page sends with a session: the cookie, its tab proof and its own Origin. */
export function pageHeaders(
  gateway: RunningGateway,
  signIn: Pick<SignIn, 'cookie' | 'tabProof'>,
): Record<string, string> {
  return { Cookie: signIn.cookie, 'X-Sendbox-Session': signIn.tabProof, Origin: new URL(gateway.url).origin };
}

/** Another gateway for the same host, on `dataDir` (a restart, a second box); files are served only when given. */
export function startGatewayOn(
  host: AgentHost,
  dataDir: string,
  options: { webRoot: string; port?: number } & Pick<
    GatewayOptions,
    'bindHost' | 'publicUrl' | 'loginCommand' | 'shared' | 'sessionFiles'
  > &
    Partial<Pick<GatewayOptions, 'files'>>,
): Promise<RunningGateway> {
  const unused = (): Promise<never> => Promise.reject(new Error('this test gateway serves no files'));
  return startGateway({
    host,
    files: { attachment: unused, upload: unused },
    dataDir,
    version: '0.0.0-test',
    port: 0,
    ...options,
  });
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request through `node:http`, which, unlike fetch, lets the test set `Host` and send raw paths. */
export function rawRequest(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        setHost: options.headers?.Host === undefined,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

export interface SseEvent {
  event: string;
  id: string | undefined;
  data: unknown;
}

/** Reads server-sent events from a fetch response, one parsed event at a time. */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  readonly #queue: SseEvent[] = [];

  constructor(response: Response) {
    if (response.body === null) throw new Error('the event stream has no body');
    this.#reader = response.body.getReader();
  }

  /** The next event, or null when the stream ended. */
  async next(): Promise<SseEvent | null> {
    for (;;) {
      const queued = this.#queue.shift();
      if (queued !== undefined) return queued;
      const { done, value } = await this.#reader.read();
      if (done) return null;
      this.#buffer += this.#decoder.decode(value, { stream: true });
      let end: number;
      while ((end = this.#buffer.indexOf('\n\n')) !== -1) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const event = parseBlock(block);
        if (event !== null) this.#queue.push(event);
      }
    }
  }

  /** Events until `until` accepts one (included); fails if the stream ends first. */
  async collect(until: (event: SseEvent) => boolean): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (event === null) throw new Error(`the stream ended after ${events.length} events`);
      events.push(event);
      if (until(event)) return events;
    }
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel();
  }
}

function parseBlock(block: string): SseEvent | null {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  return { event, id, data: JSON.parse(data.join('\n')) as unknown };
}

export function entryOf(event: SseEvent): SequencedEntry {
  if (event.event !== 'entry') throw new Error(`expected an entry event, got ${event.event}`);
  return event.data as SequencedEntry;
}

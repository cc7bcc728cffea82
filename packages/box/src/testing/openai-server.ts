/**
 * A tiny OpenAI-compatible `/v1/chat/completions` server on a loopback port,
 * for tests of the real provider path. Each request takes the next scripted
 * reply (streamed when the request asks for a stream); every request body is kept for
 * assertions. Never used outside tests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeCompletionStream } from './openai-stream.ts';

export type ScriptedReply =
  | {
      kind: 'message';
      content?: string;
      toolCalls?: Array<{ id: string; name: string; arguments: string }>;
      /** Streamed: the pause between deltas (a slow, steady model). */
      delayMs?: number;
    }
  | { kind: 'status'; status: number; body: unknown; headers?: Record<string, string> }
  /** Accepts the request and never answers (a timeout). */
  | { kind: 'hang' };

export interface OpenAiTestServer {
  baseURL: string;
  requests: Array<{ path: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }>;
  reply(...replies: ScriptedReply[]): void;
  /** Answers every request the scripted replies do not (a model that always knows what to say). */
  respondWith(answer: (body: Record<string, unknown>) => ScriptedReply): void;
  close(): Promise<void>;
}

/**
 * How the server treats `stream: true`: `stream` streams (default); `json` answers one JSON body
 * (an endpoint that ignores the flag); `refuse` answers HTTP 400 naming `stream`.
 */
export type StreamSupport = 'stream' | 'json' | 'refuse';

export async function startOpenAiTestServer(
  options: { streams?: StreamSupport } = {},
): Promise<OpenAiTestServer> {
  const streams = options.streams ?? 'stream';
  const replies: ScriptedReply[] = [];
  let fallback: ((body: Record<string, unknown>) => ScriptedReply) | null = null;
  const requests: OpenAiTestServer['requests'] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      if (body.stream === true && streams === 'refuse') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: "'stream' is not supported by this server", type: 'invalid_request_error' },
          }),
        );
        return;
      }
      const reply = replies.shift() ?? fallback?.(body);
      if (!reply) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'test server: no reply scripted' } }));
        return;
      }
      if (reply.kind === 'hang') {
        hanging.add(res);
        return;
      }
      if (reply.kind === 'status') {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(JSON.stringify(reply.body));
        return;
      }
      if (body.stream === true && streams === 'stream') {
        void writeCompletionStream(res, {
          ...(reply.delayMs ? { delayMs: reply.delayMs } : {}),
          id: `chatcmpl-${requests.length}`,
          model: typeof body.model === 'string' ? body.model : 'test-model',
          content: reply.content ?? null,
          toolCalls: reply.toolCalls ?? [],
        });
        return;
      }
      const toolCalls = reply.toolCalls?.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: typeof body.model === 'string' ? body.model : 'test-model',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: reply.content ?? null,
                ...(toolCalls ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: toolCalls?.length ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...more) => replies.push(...more),
    respondWith: (answer) => {
      fallback = answer;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

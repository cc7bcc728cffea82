import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from './client.ts';
import { backoffDelay, createSseParser, followAgentEvents, type SseMessage } from './events.ts';
import type { TranscriptEntry } from './types.ts';

function parseAll(chunks: readonly string[]): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = createSseParser((message) => out.push(message));
  for (const chunk of chunks) parser.feed(chunk);
  return out;
}

const STREAM =
  ': sendbox events\r\n\r\n' +
  'event: entry\r\nid: 1\r\ndata: {"a":1}\r\n\r\n' +
  'event: state\ndata: {"b":\ndata: 2}\n\n' +
  ': ping\n\n' +
  'retry: 10\rdata:no-space\r\r' +
  'event: entry\nid: 7\ndata: x\n\n';

describe('createSseParser', () => {
  it('dispatches events with their type, joined data lines and the last id', () => {
    expect(parseAll([STREAM])).toEqual([
      { event: 'entry', data: '{"a":1}', lastEventId: '1' },
      { event: 'state', data: '{"b":\n2}', lastEventId: '1' },
      { event: 'message', data: 'no-space', lastEventId: '1' },
      { event: 'entry', data: 'x', lastEventId: '7' },
    ]);
  });

  it('gives the same events however the stream is split into chunks (CRLF halves included)', () => {
    const whole = parseAll([STREAM]);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 12 }),
        (cuts) => {
          const points = [0, ...[...cuts].sort((a, b) => a - b), STREAM.length];
          const chunks = points.slice(1).map((end, i) => STREAM.slice(points[i], end));
          expect(parseAll(chunks)).toEqual(whole);
        },
      ),
    );
  });

  it('does not dispatch an event that has no data, nor a trailing event without its blank line', () => {
    expect(parseAll(['event: state\n\n', 'data: partial\n'])).toEqual([]);
  });

  it('drops a partial event on reset but keeps the last event id', () => {
    const out: SseMessage[] = [];
    const parser = createSseParser((message) => out.push(message));
    parser.feed('id: 4\ndata: a\n\ndata: half');
    parser.reset();
    parser.feed('data: b\n\n');
    expect(out.map((m) => [m.data, m.lastEventId])).toEqual([
      ['a', '4'],
      ['b', '4'],
    ]);
  });
});

describe('backoffDelay', () => {
  it('doubles from 0.5 s and caps at 15 s', () => {
    expect([0, 1, 2, 5, 9].map(backoffDelay)).toEqual([500, 1000, 2000, 15_000, 15_000]);
  });
});

describe('followAgentEvents against a loopback server', () => {
  let server: Server | null = null;
  afterEach(async () => {
    const running = server;
    server = null;
    if (!running) return;
    running.closeAllConnections();
    await new Promise((resolve) => running.close(resolve));
  });

  const entry = (seq: number) =>
    `event: entry\nid: ${seq}\ndata: ${JSON.stringify({ id: `e${seq}`, seq, kind: 'notice', text: `n${seq}`, timestampMs: 1 })}\n\n`;

  async function listen(
    handler: (url: URL, auth: string | undefined, res: ServerResponse) => void,
  ): Promise<string> {
    server = createServer((req, res) =>
      handler(
        new URL(req.url ?? '/', 'http://x'),
        req.headers['x-sendbox-session'] as string | undefined,
        res,
      ),
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it("sends this tab's session proof and resumes with after=<last seq> when the stream drops", async () => {
    const requests: { after: string | null; agentId: string | null; auth: string | undefined }[] = [];
    const base = await listen((url, auth, res) => {
      requests.push({ after: url.searchParams.get('after'), agentId: url.searchParams.get('agentId'), auth });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      if (requests.length === 1) {
        res.end(entry(6) + entry(7) + 'event: state\ndata: {"agentId":"a1","state":"working"}\n\n');
      } else {
        res.write(entry(8));
      }
    });
    const client = createApiClient({
      baseUrl: base,
      session: { proof: () => 'tab-proof', refresh: () => Promise.resolve('tab-proof') },
    });
    const abort = new AbortController();
    const seen: TranscriptEntry[] = [];
    const states: string[] = [];
    await followAgentEvents(
      client,
      'a1',
      5,
      {
        onEntry: (e) => {
          seen.push(e);
          if (e.seq === 8) abort.abort();
        },
        onState: (_agent, state) => states.push(state),
        onRoster: () => undefined,
        onStatus: () => undefined,
      },
      abort.signal,
    );
    expect(seen.map((e) => e.seq)).toEqual([6, 7, 8]);
    expect(states).toEqual(['working']);
    expect(requests).toEqual([
      { after: '5', agentId: 'a1', auth: 'tab-proof' },
      { after: '7', agentId: 'a1', auth: 'tab-proof' },
    ]);
  });

  it('stops for good on 404 and says why', async () => {
    let calls = 0;
    const base = await listen((_url, _auth, res) => {
      calls++;
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"unknown agent"}');
    });
    const statuses: string[] = [];
    await followAgentEvents(
      createApiClient({ baseUrl: base }),
      'gone',
      0,
      {
        onEntry: () => undefined,
        onState: () => undefined,
        onRoster: () => undefined,
        onStatus: (status, detail) => statuses.push(detail ? `${status}: ${detail}` : status),
      },
      new AbortController().signal,
    );
    expect(calls).toBe(1);
    expect(statuses.at(-1)).toBe('stopped: this agent no longer exists (it was deleted).');
  });

  it('keeps retrying after a refusal (a restarted box) and tells the page to renew its access', async () => {
    let calls = 0;
    const abort = new AbortController();
    const base = await listen((_url, _auth, res) => {
      calls++;
      if (calls < 3) {
        res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"bad token"}');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: state\ndata: {"agentId":"a1","state":"idle"}\n\n');
    });
    let refusals = 0;
    await followAgentEvents(
      createApiClient({ baseUrl: base }),
      'a1',
      0,
      {
        onEntry: () => undefined,
        onState: () => abort.abort(),
        onRoster: () => undefined,
        onStatus: () => undefined,
        onUnauthorized: () => refusals++,
      },
      abort.signal,
    );
    expect(calls).toBe(3);
    expect(refusals).toBe(2);
  });

  it('omits agentId for the roster-only stream', async () => {
    let query = '';
    const base = await listen((url, _auth, res) => {
      query = url.search;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: roster\ndata: {"agentId":"x","change":"created"}\n\n');
    });
    const abort = new AbortController();
    const changes: string[] = [];
    await followAgentEvents(
      createApiClient({ baseUrl: base }),
      null,
      0,
      {
        onEntry: () => undefined,
        onState: () => undefined,
        onRoster: (agentId, change) => {
          changes.push(`${agentId} ${change}`);
          abort.abort();
        },
        onStatus: () => undefined,
      },
      abort.signal,
    );
    expect(query).toBe('?after=0');
    expect(changes).toEqual(['x created']);
  });
});

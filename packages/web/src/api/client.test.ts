import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient, parseNewest } from './client.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server | null = null;
afterEach(async () => {
  const running = server;
  server = null;
  if (running) await new Promise((resolve) => running.close(resolve));
});

async function gateway(
  reply: (seen: Seen, res: ServerResponse) => void,
): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const record = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      seen.push(record);
      reply(record, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const fixedProof = (proof: string) => ({ proof: () => proof, refresh: () => Promise.resolve(proof) });

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

const row = {
  id: 'a1',
  name: 'Agent',
  description: '',
  harness: 'box',
  updatedAt: 1,
  lastActivityAt: 1,
  lastEntry: null,
  unreadCount: 0,
  hasUnread: false,
  awaitingUserResponse: false,
  awaitingApproval: false,
  state: 'idle',
  readOnly: false,
};

describe('createApiClient', () => {
  it("posts JSON with this tab's session proof, no token, and checks the response", async () => {
    const { base, seen } = await gateway((_seen, res) => json(res, 200, [row]));
    const rows = await createApiClient({ baseUrl: base, session: fixedProof('proof-1') }).listAgents();
    expect(rows).toEqual([row]);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/api/listAgents' });
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[0]!.headers['x-sendbox-session']).toBe('proof-1');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]!.body.toString())).toEqual({});
  });

  it("turns an error status into an ApiError whose message is the gateway's, as a sentence", async () => {
    const { base } = await gateway((_seen, res) =>
      json(res, 409, { error: 'answerWidget: that widget was already answered' }),
    );
    const failure = createApiClient({ baseUrl: base }).answerWidget({
      agentId: 'a1',
      messageId: 't1s0',
      answer: ['a', 'b'],
    });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({
      status: 409,
      endpoint: '/api/answerWidget',
      message: 'That widget was already answered.',
    });
  });

  it('says what a status means when the gateway gives no message, never the raw method and code', async () => {
    const statuses: Array<[number, unknown]> = [
      [500, { error: 'internal error while handling /api/listAgents; the gateway log has the details' }],
      [502, 'Bad Gateway'],
      [413, ''],
      [413, { error: 'sendPrompt: request body is larger than the 1 MiB limit' }],
      [401, { error: 'no' }],
      [
        401,
        {
          error:
            'not signed in: …; open the login link `sendbox serve` printed, or run `node /opt/sendbox/packages/box/bin/sendbox.mjs login` for a fresh one',
        },
      ],
      [404, ''],
    ];
    const messages: string[] = [];
    for (const [status, body] of statuses) {
      const { base } = await gateway((_seen, res) =>
        typeof body === 'string'
          ? res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body)
          : json(res, status, body),
      );
      messages.push(
        await createApiClient({ baseUrl: base })
          .listAgents()
          .then(
            () => 'resolved',
            (error: Error) => error.message,
          ),
      );
      await new Promise((resolve) => server!.close(resolve));
      server = null;
    }
    expect(messages).toEqual([
      'sendbox could not do that (500 Internal Server Error); the terminal where it runs says why.',
      'sendbox could not do that (502 Bad Gateway); the terminal where it runs says why.',
      'That is too large for sendbox.',
      'That is too large: sendbox takes at most 1 MiB.',
      'This browser is signed out: run `sendbox login` in a terminal and open the link it prints.',
      'This browser is signed out: run `node /opt/sendbox/packages/box/bin/sendbox.mjs login` in a terminal and open the link it prints.',
      'sendbox refused that (404 Not Found).',
    ]);
    for (const message of messages) expect(message).not.toMatch(/\/api\/|failed with/);
    const unreachable = await createApiClient({ baseUrl: 'http://127.0.0.1:9' })
      .listAgents()
      .catch((error: ApiError) => error);
    expect(unreachable).toMatchObject({ status: 0, endpoint: '/api/listAgents' });
    expect((unreachable as ApiError).message).toBe(
      'sendbox is not reachable: check that it is still running, then try again.',
    );
  });

  it('rejects a response of the wrong shape, naming the field', async () => {
    const { base } = await gateway((_seen, res) =>
      json(res, 200, { agent: { ...row, updatedAt: 'yesterday' } }),
    );
    await expect(createApiClient({ baseUrl: base }).createAgent({ name: 'x' })).rejects.toThrow(
      /a form this page does not know \(at agent\.updatedAt: .*reload it/,
    );
  });

  it('parses openAgent entries, keeping unknown kinds as unrecognized and skipping id-less ones', async () => {
    const { base } = await gateway((_seen, res) =>
      json(res, 200, {
        entries: [
          { id: 'n1', seq: 1, kind: 'notice', text: 'hi', timestampMs: 5 },
          { id: 'v1', seq: 2, kind: 'voice-call', timestampMs: 6 },
          { kind: 'notice', text: 'no id' },
        ],
      }),
    );
    const entries = await createApiClient({ baseUrl: base }).openAgent('a1');
    expect(entries.map((e) => [e.id, e.kind])).toEqual([
      ['n1', 'notice'],
      ['v1', '$unrecognized'],
    ]);
  });

  it('uploads raw bytes with the agent id and a percent-encoded file name', async () => {
    const { base, seen } = await gateway((_seen, res) =>
      json(res, 200, {
        entry: {
          id: 'u1',
          seq: 9,
          kind: 'user-attachment',
          file_name: 'ré sumé.pdf',
          file_path: 'p',
          timestampMs: 1,
        },
      }),
    );
    const entry = await createApiClient({ baseUrl: base }).uploadFile({
      agentId: 'a1',
      file: new Blob([new Uint8Array([1, 2, 3])]),
      fileName: 'ré sumé.pdf',
      clientNonce: 'n-1',
    });
    expect(entry).toMatchObject({ id: 'u1', seq: 9, kind: 'user-attachment' });
    expect(seen[0]!.url).toBe('/api/uploadFile');
    expect(seen[0]!.headers['content-type']).toBe('application/octet-stream');
    expect(seen[0]!.headers['x-agent-id']).toBe('a1');
    expect(seen[0]!.headers['x-file-name']).toBe('r%C3%A9%20sum%C3%A9.pdf');
    expect(seen[0]!.headers['x-client-nonce']).toBe('n-1');
    expect([...seen[0]!.body]).toEqual([1, 2, 3]);
  });

  it('after a 401, asks the other tabs for a newer proof once and retries with it', async () => {
    const { base, seen } = await gateway((request, res) =>
      request.headers['x-sendbox-session'] === 'new'
        ? json(res, 200, [row])
        : json(res, 401, { error: 'no' }),
    );
    let proof = 'old';
    let refreshes = 0;
    const session = {
      proof: () => proof,
      refresh: () => {
        refreshes++;
        proof = 'new';
        return Promise.resolve(proof);
      },
    };
    expect(await createApiClient({ baseUrl: base, session }).listAgents()).toEqual([row]);
    expect(seen.map((request) => request.headers['x-sendbox-session'])).toEqual(['old', 'new']);
    // No newer proof anywhere: the 401 stands, and the request is not repeated.
    const stale = { proof: () => 'old', refresh: () => Promise.resolve('old') };
    await expect(createApiClient({ baseUrl: base, session: stale }).listAgents()).rejects.toMatchObject({
      status: 401,
    });
    expect(seen).toHaveLength(3);
    expect(refreshes).toBe(1);
  });

  it("fetches attachment bytes with GET and this tab's session proof", async () => {
    const { base, seen } = await gateway((_seen, res) =>
      res.writeHead(200, { 'Content-Type': 'image/png' }).end('PNG'),
    );
    const blob = await createApiClient({ baseUrl: base, session: fixedProof('proof-2') }).attachment(
      'a1',
      'f'.repeat(64),
    );
    expect(await blob.text()).toBe('PNG');
    expect(blob.type).toBe('image/png');
    expect(seen[0]).toMatchObject({
      method: 'GET',
      url: `/api/attachment?agentId=a1&sha256=${'f'.repeat(64)}`,
    });
    expect(seen[0]!.headers['x-sendbox-session']).toBe('proof-2');
  });

  it('reports an unreachable gateway with status 0', async () => {
    const failing = createApiClient({
      baseUrl: 'http://127.0.0.1:9',
      fetch: () => Promise.reject(new Error('ECONNREFUSED')),
    });
    await expect(failing.getStatus()).rejects.toMatchObject({ status: 0 });
  });
});

describe('parseNewest', () => {
  const raw = (count: number) =>
    Array.from({ length: count }, (_, i) =>
      i % 2 === 0
        ? { id: `t${i}`, seq: i + 1, timestampMs: 1, kind: 'thinking', text: 'hidden by default' }
        : { id: `n${i}`, seq: i + 1, timestampMs: 1, kind: 'notice', text: `notice ${i}` },
    );

  it('checks entries from the newest back until enough take a row, leaving the rest unchecked', () => {
    const ledger = raw(100);
    const { newest, older } = parseNewest(ledger, 10, 'test');
    // Back to the 10th notice, with the thinking entries between them: the last 19 entries.
    expect(newest.map((entry) => entry.seq)).toEqual(ledger.slice(-19).map((entry) => entry.seq));
    expect(newest.filter((entry) => entry.kind === 'notice')).toHaveLength(10);
    expect(older).toEqual(ledger.slice(0, 81));
  });

  it('checks everything when the ledger is shorter than the window', () => {
    const { newest, older } = parseNewest(raw(6), 10, 'test');
    expect(newest).toHaveLength(6);
    expect(older).toEqual([]);
  });

  it('checks and sorts everything when the entries are out of seq order', () => {
    const ledger = raw(30).reverse();
    const { newest, older } = parseNewest(ledger, 5, 'test');
    expect(newest.map((entry) => entry.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(older).toEqual([]);
  });

  it('keeps a malformed entry as unrecognized and skips one without id or seq', () => {
    const ledger = [...raw(4), { kind: 'notice', text: 'no id' }, { id: 'x', seq: 99, kind: 'voice-call' }];
    const { newest } = parseNewest(ledger, 10, 'test');
    expect(newest.map((entry) => entry.kind)).toEqual([
      'thinking',
      'notice',
      'thinking',
      'notice',
      '$unrecognized',
    ]);
  });
});

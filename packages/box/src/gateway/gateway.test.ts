/**
 * The gateway over real HTTP on an ephemeral loopback port, driving the real
 * host on a temp data dir; only the model is scripted.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentPaths } from '../stores/files/layout.ts';
import type { RosterRow } from '../host/types.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { removeGatewayDescriptor, writeGatewayDescriptor } from './descriptor.ts';
import { fileResponse } from './file-response.ts';
import { UPLOAD_LIMIT } from './body.ts';
import { agentFiles, boxAgentFolders } from './files.ts';
import { GatewayStartError, type GatewayOptions, SHUTDOWN_GRACE_MS, startGateway } from './server.ts';
import { CONTENT_SECURITY_POLICY } from './static-ui.ts';
import { entryOf, makeTempDir, openLoginLink, rawRequest, SseReader, startTestBox } from './test-support.ts';
import type { TestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

let box: TestBox;
const model = testModel();

beforeAll(async () => {
  box = await startTestBox(model);
});
afterAll(async () => {
  await box.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function createAgent(name: string): Promise<RosterRow> {
  const { status, body } = await box.call('createAgent', { name });
  expect(status).toBe(200);
  return (body as { agent: RosterRow }).agent;
}

function authority(): string {
  return `127.0.0.1:${box.gateway.port}`;
}

describe('authentication', () => {
  it('refuses a request without a token', async () => {
    const response = await fetch(new URL('api/listAgents', box.gateway.url), { method: 'POST', body: '{}' });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toMatch(/Authorization: Bearer/);
  });

  it('refuses a wrong token, including a prefix of the right one', async () => {
    for (const token of ['nope', box.gateway.token.slice(0, -1), `${box.gateway.token}x`]) {
      const response = await fetch(new URL('api/listAgents', box.gateway.url), {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
        body: '{}',
      });
      expect(response.status).toBe(401);
    }
  });

  it('accepts the right token, compared with crypto.timingSafeEqual', async () => {
    const compare = vi.spyOn(crypto, 'timingSafeEqual');
    const { status } = await box.call('listAgents');
    expect(status).toBe(200);
    expect(compare).toHaveBeenCalled();
    const [a, b] = compare.mock.calls[0] as [Buffer, Buffer];
    expect(a.length).toBe(b.length);
  });

  it('guards every /api route, not only the JSON methods', async () => {
    for (const route of ['events', 'attachment', 'upload']) {
      const response = await fetch(new URL(`api/${route}`, box.gateway.url));
      expect(response.status, route).toBe(401);
    }
  });
});

describe('Host and Origin (DNS rebinding)', () => {
  const authHeaders = (): Record<string, string> => ({ Authorization: `Bearer ${box.gateway.token}` });

  it('refuses a foreign Host, even with the right token', async () => {
    const foreign = [
      'evil.example:1340',
      `evil.example:${box.gateway.port}`,
      `127.0.0.1.evil.example:${box.gateway.port}`,
      '127.0.0.1:1',
      '127.0.0.1',
      `0.0.0.0:${box.gateway.port}`,
    ];
    for (const host of foreign) {
      const response = await rawRequest(box.gateway.url, {
        method: 'POST',
        path: '/api/listAgents',
        headers: { Host: host, ...authHeaders() },
        body: '{}',
      });
      expect(response.status, host).toBe(403);
    }
  });

  it('serves its own names: 127.0.0.1, localhost and [::1] on its port', async () => {
    for (const name of ['127.0.0.1', 'localhost', 'LOCALHOST', '[::1]']) {
      const response = await rawRequest(box.gateway.url, {
        method: 'POST',
        path: '/api/listAgents',
        headers: { Host: `${name}:${box.gateway.port}`, ...authHeaders() },
        body: '{}',
      });
      expect(response.status, name).toBe(200);
    }
  });

  it('does not hand the token-bearing page to a foreign Host', async () => {
    const response = await rawRequest(box.gateway.url, {
      path: '/',
      headers: { Host: 'rebound.example:1340' },
    });
    expect(response.status).toBe(403);
    expect(response.body).not.toContain(box.gateway.token);
  });

  it('refuses a foreign or opaque Origin and accepts its own', async () => {
    const cases: Array<[string, number]> = [
      ['http://evil.example', 403],
      [`http://evil.example:${box.gateway.port}`, 403],
      [`https://127.0.0.1:${box.gateway.port}`, 403],
      ['null', 403],
      [`http://${authority()}`, 200],
      [`http://localhost:${box.gateway.port}`, 200],
    ];
    for (const [origin, status] of cases) {
      const response = await rawRequest(box.gateway.url, {
        method: 'POST',
        path: '/api/listAgents',
        headers: { Host: authority(), Origin: origin, ...authHeaders() },
        body: '{}',
      });
      expect(response.status, origin).toBe(status);
    }
  });
});

describe('request shape', () => {
  it('answers an unknown method with 404 and a wrong verb with 405', async () => {
    const unknown = await box.call('launchMissiles');
    expect(unknown.status).toBe(404);
    expect((unknown.body as { error: string }).error).toMatch(/unknown method "launchMissiles"/);

    const get = await box.api('createAgent');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');

    const post = await box.api('events', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');

    const deeper = await box.api('createAgent/extra', { method: 'POST', body: '{}' });
    expect(deeper.status).toBe(404);
  });

  it('answers malformed JSON with 400', async () => {
    const response = await box.api('createAgent', { method: 'POST', body: '{"name": "x"' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(
      /createAgent: the body is not valid JSON/,
    );
  });

  it('answers a body of the wrong shape with 400 naming the field', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['createAgent', { name: 5 }, /createAgent: invalid request: name:/],
      ['createAgent', { name: 'x'.repeat(201) }, /createAgent: invalid request: name:/],
      ['createAgent', [], /\(body\)/],
      ['openAgent', { id: '../../etc' }, /openAgent: invalid request: id: expected an agent id/],
      ['sendPrompt', { agentId: 'a', prompt: 'hi' }, /clientNonce/],
      ['answerWidget', { agentId: 'a', messageId: 'm', answer: 3 }, /answer/],
      ['submitSecret', { agentId: 'a', messageId: 'm' }, /value/],
    ];
    for (const [method, body, pattern] of cases) {
      const { status, body: answer } = await box.call(method, body);
      expect(status, method).toBe(400);
      expect((answer as { error: string }).error, method).toMatch(pattern);
    }
  });

  it('refuses a JSON body over 1 MiB with 413, declared or streamed', async () => {
    const big = JSON.stringify({ name: 'x', description: 'y'.repeat(1024 * 1024) });
    const declared = await box.api('createAgent', { method: 'POST', body: big });
    expect(declared.status).toBe(413);

    // Chunked, with no Content-Length: the cap applies while reading.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const streamed = await box.api('createAgent', {
      method: 'POST',
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { error: string }).error).toMatch(/1 MiB limit/);
  });

  it('maps host errors onto their status', async () => {
    const missing = await box.call('openAgent', { id: 'no-such-agent' });
    expect(missing.status).toBe(404);
    expect(missing.body).toHaveProperty('error');
  });
});

describe('methods', () => {
  it('getStatus reports the model, the version and the upload limit', async () => {
    const { status, body } = await box.call('getStatus');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      model: { configured: true },
      version: '0.0.0-test',
      limits: { uploadBytes: UPLOAD_LIMIT },
    });
  });

  it('createAgent, listAgents, openAgent, duplicateAgent, deleteAgent', async () => {
    const agent = await createAgent('Roster test');
    expect(agent).toMatchObject({ name: 'Roster test', readOnly: false });

    const list = await box.call('listAgents');
    expect((list.body as RosterRow[]).map((row) => row.id)).toContain(agent.id);

    const opened = await box.call('openAgent', { id: agent.id });
    expect(opened.status).toBe(200);
    expect(Array.isArray((opened.body as { entries: unknown }).entries)).toBe(true);

    const copy = await box.call('duplicateAgent', { id: agent.id });
    expect(copy.status).toBe(200);
    const copyId = (copy.body as { agent: RosterRow }).agent.id;
    expect(copyId).not.toBe(agent.id);

    for (const id of [agent.id, copyId]) {
      const deleted = await box.call('deleteAgent', { id });
      expect(deleted).toEqual({ status: 200, body: { deleted: true } });
    }
    expect((await box.call('openAgent', { id: agent.id })).status).toBe(404);
    const after = (await box.call('listAgents')).body as RosterRow[];
    expect(after.map((row) => row.id)).not.toContain(agent.id);
  });

  it('openAgent answers JSON with every entry, the ones added since the last open included', async () => {
    const agent = await createAgent('Open twice');
    const openEntries = async (): Promise<SequencedEntry[]> => {
      const response = await box.api('openAgent', { method: 'POST', body: JSON.stringify({ id: agent.id }) });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      return ((await response.json()) as { entries: SequencedEntry[] }).entries;
    };
    for (const [turn, prompt] of ['one', 'two'].entries()) {
      await box.call('sendPrompt', {
        agentId: agent.id,
        prompt: `say:${prompt}`,
        clientNonce: `open-${prompt}`,
      });
      await vi.waitFor(async () =>
        expect((await box.host.entryById(agent.id, `t${turn}e`))?.kind).toBe('turn-ended'),
      );
      const entries = await openEntries();
      expect(entries).toEqual(await box.host.entriesAfter(agent.id, 0));
      expect(JSON.stringify(entries)).toContain(`echo: ${prompt}`);
    }
  });
});

describe('static UI', () => {
  it('serves the page to a signed-in browser with a strict CSP and no caching', async () => {
    const { cookie } = await openLoginLink(box.gateway.loginUrl());
    const response = await fetch(box.gateway.url, { headers: { Cookie: cookie } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('/assets/app.js');
    expect(html).not.toContain(box.gateway.token);
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const directives = new Map(
      CONTENT_SECURITY_POLICY.split(';').map((directive) => {
        const [name = '', ...sources] = directive.trim().split(/\s+/);
        return [name, sources.join(' ')] as const;
      }),
    );
    // Model output never reaches the network on its own: images from this origin, data: and blob: only.
    expect(directives.get('img-src')).toBe("'self' data: blob:");
    expect(directives.get('connect-src')).toBe("'self'");
    expect(directives.get('default-src')).toBe("'self'");
    expect(directives.get('form-action')).toBe("'none'");
    expect(directives.get('base-uri')).toBe("'none'");
    expect(directives.get('object-src')).toBe("'none'");
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('serves assets with their media type', async () => {
    const response = await fetch(new URL('assets/app.js', box.gateway.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await response.text()).toContain('console.log');
  });

  it('never serves a file outside the assets folder', async () => {
    await fs.promises.writeFile(path.join(box.webRoot, 'secret.txt'), 'outside');
    await fs.promises.symlink(
      path.join(box.dataDir, 'gateway.json'),
      path.join(box.webRoot, 'assets', 'link.json'),
    );
    const attempts = [
      '/assets/../secret.txt',
      '/assets/..%2fsecret.txt',
      '/assets/%2e%2e/secret.txt',
      '/assets/%2e%2e%2fsecret.txt',
      '/assets/..%5csecret.txt',
      '/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/assets//etc/passwd',
      '/assets/link.json',
      '/assets/app.js%00.png',
      '/assets/',
      '/../gateway.json',
    ];
    for (const attempt of attempts) {
      const response = await rawRequest(box.gateway.url, { path: attempt });
      expect(response.status, attempt).toBe(404);
      expect(response.body, attempt).not.toContain('outside');
      expect(response.body, attempt).not.toContain(box.gateway.token);
    }
  });
});

describe('gateway.json', () => {
  it('holds the live address and token, mode 0600', async () => {
    const file = path.join(box.dataDir, 'gateway.json');
    const stat = await fs.promises.stat(file);
    expect(stat.mode & 0o777).toBe(0o600);
    const descriptor = JSON.parse(await fs.promises.readFile(file, 'utf8')) as unknown;
    expect(descriptor).toEqual({ host: '127.0.0.1', port: box.gateway.port, token: box.gateway.token });
  });
});

describe('events', () => {
  it('refuses a bad after or agentId with 400 and an unknown agent with 404', async () => {
    expect((await box.api('events?agentId=x&after=-1')).status).toBe(400);
    expect((await box.api('events?agentId=x&after=abc')).status).toBe(400);
    expect((await box.api('events?agentId=..%2F..')).status).toBe(400);
    expect((await box.api('events?agentId=nobody')).status).toBe(404);
  });

  it('streams the backlog, then live entries, and resumes after a seq without gaps or repeats', async () => {
    const agent = await createAgent('Stream test');
    const stream = new SseReader(await box.api(`events?agentId=${agent.id}`));
    // Two turns while the stream is open: every entry arrives live.
    for (const prompt of ['first', 'second']) {
      const sent = await box.call('sendPrompt', {
        agentId: agent.id,
        prompt: `say:${prompt}`,
        clientNonce: `nonce-${prompt}`,
      });
      expect(sent).toEqual({ status: 200, body: { accepted: true, duplicate: false } });
      await stream.collect(
        (event) => event.event === 'entry' && JSON.stringify(event.data).includes(`echo: ${prompt}`),
      );
    }
    await stream.cancel();

    const ledgerSeqs = async (): Promise<number[]> =>
      ((await box.call('openAgent', { id: agent.id })).body as { entries: SequencedEntry[] }).entries.map(
        (entry) => entry.seq,
      );
    const seqs = await ledgerSeqs();
    expect(seqs.length).toBeGreaterThanOrEqual(4);

    for (const after of [0, ...seqs]) {
      for (const via of ['query', 'Last-Event-ID'] as const) {
        const expected = (await ledgerSeqs()).filter((seq) => seq > after);
        const replay = new SseReader(
          via === 'query'
            ? await box.api(`events?agentId=${agent.id}&after=${after}`)
            : await box.api(`events?agentId=${agent.id}`, { headers: { 'Last-Event-ID': String(after) } }),
        );
        // A marker turn after the backlog: its entries must follow the backlog live.
        const nonce = `marker-${after}-${via.length}`;
        await box.call('sendPrompt', { agentId: agent.id, prompt: `say:${nonce}`, clientNonce: nonce });
        const events = await replay.collect(
          (event) => event.event === 'entry' && JSON.stringify(event.data).includes(`echo: ${nonce}`),
        );
        await replay.cancel();
        const entries = events.filter((event) => event.event === 'entry');
        const got = entries.map((event) => entryOf(event).seq);
        const label = `after=${after} via ${via}`;
        expect(got.slice(0, expected.length), label).toEqual(expected);
        // Exactly the ledger past `after`, in order, none twice.
        expect(got, label).toEqual(
          (await ledgerSeqs()).filter((seq) => seq > after && seq <= (got.at(-1) ?? 0)),
        );
        for (const event of entries) expect(event.id).toBe(String(entryOf(event).seq));
      }
    }
  });
});

/** Waits on an agent's stream for the send-message entry whose stored message satisfies `match`. */
async function awaitSend(
  stream: SseReader,
  match: (message: Record<string, unknown>) => boolean,
): Promise<SequencedEntry & { kind: 'send-message' }> {
  const events = await stream.collect((event) => {
    if (event.event !== 'entry') return false;
    const entry = entryOf(event);
    return entry.kind === 'send-message' && match(entry.message);
  });
  return entryOf(events.at(-1)!) as SequencedEntry & { kind: 'send-message' };
}

const saysText = (text: string) => (message: Record<string, unknown>) => message.content === text;

async function openStream(agentId: string, after = 0): Promise<SseReader> {
  const response = await box.api(`events?agentId=${agentId}&after=${after}`);
  expect(response.status).toBe(200);
  return new SseReader(response);
}

describe('turns', () => {
  it('runs turns on two agents at once: a turn waiting on the model does not hold up another agent', async () => {
    const slow = await createAgent('Slow agent');
    const fast = await createAgent('Fast agent');
    const slowStream = await openStream(slow.id);
    const fastStream = await openStream(fast.id);

    const slowInModel = model.blocked('slow-turn');
    // sendPrompt returns on acceptance, while the turn is still inside the model.
    const accepted = await box.call('sendPrompt', {
      agentId: slow.id,
      prompt: 'block:slow-turn',
      clientNonce: 'slow-1',
    });
    expect(accepted).toEqual({ status: 200, body: { accepted: true, duplicate: false } });
    await slowInModel;

    await box.call('sendPrompt', { agentId: fast.id, prompt: 'say:fast-turn', clientNonce: 'fast-1' });
    await awaitSend(fastStream, saysText('echo: fast-turn'));

    const rows = (await box.call('listAgents')).body as RosterRow[];
    expect(rows.find((row) => row.id === slow.id)?.state).toBe('working');
    // Other requests are served meanwhile too.
    expect((await box.call('openAgent', { id: fast.id })).status).toBe(200);

    model.release('slow-turn');
    await awaitSend(slowStream, saysText('released: slow-turn'));
    await Promise.all([slowStream.cancel(), fastStream.cancel()]);
  });

  it('sendPrompt is idempotent per clientNonce', async () => {
    const agent = await createAgent('Nonce agent');
    const stream = await openStream(agent.id);
    const first = await box.call('sendPrompt', {
      agentId: agent.id,
      prompt: 'say:once',
      clientNonce: 'same',
    });
    const again = await box.call('sendPrompt', {
      agentId: agent.id,
      prompt: 'say:once',
      clientNonce: 'same',
    });
    expect(first.body).toEqual({ accepted: true, duplicate: false });
    expect(again.body).toEqual({ accepted: true, duplicate: true });
    await awaitSend(stream, saysText('echo: once'));
    await stream.cancel();
    const { entries } = (await box.call('openAgent', { id: agent.id })).body as { entries: SequencedEntry[] };
    expect(entries.filter((entry) => entry.kind === 'message' && entry.role === 'user')).toHaveLength(1);
  });
});

describe('widgets and secrets', () => {
  it('answerWidget accepts one answer and refuses a second with 409', async () => {
    const agent = await createAgent('Widget agent');
    const stream = await openStream(agent.id);
    await box.call('sendPrompt', { agentId: agent.id, prompt: 'widget:color', clientNonce: 'w' });
    const widget = await awaitSend(stream, (message) => message.type === 'widget');

    const unknown = await box.call('answerWidget', {
      agentId: agent.id,
      messageId: 'no-such',
      answer: 'yes',
    });
    expect(unknown.status).toBe(404);
    const answered = await box.call('answerWidget', {
      agentId: agent.id,
      messageId: widget.id,
      answer: 'yes',
    });
    expect(answered).toEqual({ status: 200, body: { accepted: true } });
    const twice = await box.call('answerWidget', { agentId: agent.id, messageId: widget.id, answer: 'no' });
    expect(twice.status).toBe(409);
    // The answer is a user message pointing at the widget.
    await stream.collect(
      (event) => event.event === 'entry' && entryOf(event).kind === 'message' && 'replyTo' in entryOf(event),
    );
    await stream.cancel();
  });

  it('submitSecret saves the value, never echoes or logs it, and refuses a second answer', async () => {
    const secret = 'sk-gateway-test-7f3a9c1e5b';
    const written: string[] = [];
    const capture = (chunk: unknown): boolean => {
      written.push(String(chunk));
      return true;
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture);
    vi.spyOn(process.stderr, 'write').mockImplementation(capture);
    for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      vi.spyOn(console, level).mockImplementation(
        (...args: unknown[]) => void written.push(args.map(String).join(' ')),
      );
    }

    const agent = await createAgent('Secret agent');
    const stream = await openStream(agent.id);
    await box.call('sendPrompt', { agentId: agent.id, prompt: 'secret:API_TOKEN', clientNonce: 's' });
    const request = await awaitSend(stream, (message) => message.type === 'secret-request');

    const saved = await box.api('submitSecret', {
      method: 'POST',
      body: JSON.stringify({ agentId: agent.id, messageId: request.id, value: secret }),
    });
    const savedText = await saved.text();
    expect(saved.status).toBe(200);
    expect(JSON.parse(savedText)).toEqual({ saved: true });
    const twice = await box.api('submitSecret', {
      method: 'POST',
      body: JSON.stringify({ agentId: agent.id, messageId: request.id, value: secret }),
    });
    const twiceText = await twice.text();
    expect(twice.status).toBe(409);
    // A malformed submission does not echo the value either.
    const bad = await box.api('submitSecret', {
      method: 'POST',
      body: JSON.stringify({ agentId: agent.id, messageId: 5, value: secret }),
    });
    const badText = await bad.text();
    expect(bad.status).toBe(400);

    const events = await stream.collect(
      (event) => event.event === 'entry' && entryOf(event).kind === 'message' && 'replyTo' in entryOf(event),
    );
    await stream.cancel();
    const { entries } = (await box.call('openAgent', { id: agent.id })).body as { entries: SequencedEntry[] };

    const everything = [
      ...written,
      ...box.requestLog,
      ...box.errorLog,
      savedText,
      twiceText,
      badText,
      JSON.stringify(events),
      JSON.stringify(entries),
    ].join('\n');
    expect(box.requestLog.some((line) => line.includes('/api/submitSecret'))).toBe(true);
    expect(everything).not.toContain(secret);
  });

  it("openAgent names a duplicate's answered secret requests whose secret it does not hold (secrets are not copied)", async () => {
    const agent = await createAgent('Secret holder');
    const stream = await openStream(agent.id);
    await box.call('sendPrompt', { agentId: agent.id, prompt: 'secret:COPY_TOKEN', clientNonce: 'c' });
    const request = await awaitSend(stream, (message) => message.type === 'secret-request');
    const notHeld = async (id: string) =>
      ((await box.call('openAgent', { id })).body as { secretRequestsNotHeld: string[] })
        .secretRequestsNotHeld;
    // Asked, not answered yet: nothing to say (the page shows the form).
    expect(await notHeld(agent.id)).toEqual([]);
    await box.call('submitSecret', { agentId: agent.id, messageId: request.id, value: 'sk-copy-1234567' });
    await stream.collect(
      (event) => event.event === 'entry' && entryOf(event).kind === 'message' && 'replyTo' in entryOf(event),
    );
    await stream.cancel();
    expect(await notHeld(agent.id)).toEqual([]);
    const copy = (await box.call('duplicateAgent', { id: agent.id })).body as { agent: RosterRow };
    expect(await notHeld(copy.agent.id)).toEqual([request.id]);
  });
});

describe('files', () => {
  it('uploads a file and streams it back', async () => {
    const agent = await createAgent('Upload agent');
    const bytes = new TextEncoder().encode('hello from the user\n');
    const response = await box.api('uploadFile', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/octet-stream',
        'X-Agent-Id': agent.id,
        'X-File-Name': encodeURIComponent('notes – été.txt'),
        'X-Client-Nonce': 'up-1',
      },
      body: bytes,
    });
    expect(response.status).toBe(200);
    const { entry } = (await response.json()) as { entry: SequencedEntry };
    expect(entry).toMatchObject({ kind: 'user-attachment', file_name: 'notes – été.txt' });

    const download = await box.api(`upload?agentId=${agent.id}&entryId=${encodeURIComponent(entry.id)}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''notes");
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it('answers HEAD for an asset without holding the file open', async () => {
    const asset = path.join(box.webRoot, 'assets', 'big.js');
    await fs.promises.writeFile(asset, `// ${'x'.repeat(1024 * 1024)}\n`);
    const onDisk = await fs.promises.realpath(asset);
    const openHere = () =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === onDisk;
        } catch {
          return false; // closed meanwhile
        }
      }).length;
    const head = await fetch(new URL('assets/big.js', box.gateway.url), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String((await fs.promises.stat(asset)).size));
    expect(await head.text()).toBe('');
    // A body nobody reads never ends, so the handle would stay open until garbage collection.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(openHere()).toBe(0);
  });

  it('sends the length it announced when a sandbox file grows after the open', async () => {
    const agent = await createAgent('Growing agent');
    const bytes = new Uint8Array(256 * 1024).fill(0x61);
    const response = await box.api('uploadFile', {
      method: 'POST',
      headers: { 'X-Agent-Id': agent.id, 'X-File-Name': 'grows.txt', 'X-Client-Nonce': 'grow-1' },
      body: bytes,
    });
    const { entry } = (await response.json()) as { entry: SequencedEntry & { file_path: string } };
    const onDisk = path.resolve(agentPaths(box.dataDir, agent.id).sandbox, entry.file_path);
    const served = await agentFiles(box.host, boxAgentFolders(box.dataDir)).upload(agent.id, entry.id);
    await fs.promises.appendFile(onDisk, 'more written after the open');
    const body = new Uint8Array(await fileResponse(served, 'text/plain').arrayBuffer());
    expect(body).toEqual(bytes);
  });

  it('serves an upload recorded by its real path when the agent folders are reached through a link', async () => {
    const real = await makeTempDir('sendbox-real-');
    const linked = `${real}-link`;
    await fs.promises.symlink(real, linked);
    try {
      await fs.promises.writeFile(path.join(real, 'notes.txt'), 'recorded by its real path');
      // A ledger (Grok Bot's, say) that wrote the file's real path while the box reaches the folder by a link.
      const host = {
        entryById: () =>
          Promise.resolve({
            kind: 'user-attachment',
            file_path: path.join(real, 'notes.txt'),
            file_name: 'notes.txt',
          }),
      } as unknown as Parameters<typeof agentFiles>[0];
      const folders = { roots: () => [linked], attachmentsDir: () => linked, sandboxDir: () => linked };
      const served = await agentFiles(host, folders).upload('agent-1', 'entry-1');
      expect(await new Response(fileResponse(served, 'text/plain').body).text()).toBe(
        'recorded by its real path',
      );
    } finally {
      await fs.promises.rm(linked);
      await fs.promises.rm(real, { recursive: true, force: true });
    }
  });

  it('serves the file it checked: a sandbox file swapped for a link or a FIFO afterwards changes nothing', async () => {
    const agent = await createAgent('Swap agent');
    const response = await box.api('uploadFile', {
      method: 'POST',
      headers: { 'X-Agent-Id': agent.id, 'X-File-Name': 'photo.txt', 'X-Client-Nonce': 'swap-1' },
      body: 'the real upload',
    });
    const { entry } = (await response.json()) as { entry: SequencedEntry & { file_path: string } };
    const paths = agentPaths(box.dataDir, agent.id);
    const onDisk = path.resolve(paths.sandbox, entry.file_path);
    const files = agentFiles(box.host, boxAgentFolders(box.dataDir));

    // Checked and opened, then the agent (which owns the sandbox) swaps the file for a link to the ledger.
    const served = await files.upload(agent.id, entry.id);
    await fs.promises.rm(onDisk);
    await fs.promises.symlink(paths.storeDb, onDisk);
    expect(await new Response(fileResponse(served, 'text/plain').body).text()).toBe('the real upload');
    // Asked again, the link is refused at the open, not followed.
    const linked = await box.api(`upload?agentId=${agent.id}&entryId=${encodeURIComponent(entry.id)}`);
    expect(linked.status).toBe(404);
    expect(await linked.text()).not.toContain('SQLite format');

    // A FIFO in its place is refused at once instead of blocking a thread of the gateway.
    await fs.promises.rm(onDisk);
    execFileSync('mkfifo', [onDisk]);
    const piped = await box.api(`upload?agentId=${agent.id}&entryId=${encodeURIComponent(entry.id)}`);
    expect(piped.status).toBe(404);
  });

  it('refuses bad upload headers and an upload over 50 MiB', async () => {
    const agent = await createAgent('Upload limits');
    const upload = (headers: Record<string, string>, body: BodyInit) =>
      box.api('uploadFile', { method: 'POST', headers, body });
    expect((await upload({ 'X-Agent-Id': agent.id }, 'x')).status).toBe(400);
    expect((await upload({ 'X-Agent-Id': '../etc', 'X-File-Name': 'a.txt' }, 'x')).status).toBe(400);
    for (const name of ['..', '..%2Fescape.txt', 'a%5Cb.txt', 'nul%00.txt', '%E0%A4%A']) {
      const response = await upload({ 'X-Agent-Id': agent.id, 'X-File-Name': name }, 'x');
      expect(response.status, name).toBe(400);
    }
    expect((await box.api('uploadFile')).status).toBe(405);

    const big = new Uint8Array(50 * 1024 * 1024 + 1);
    const declared = await upload({ 'X-Agent-Id': agent.id, 'X-File-Name': 'big.bin' }, big);
    expect(declared.status).toBe(413);
    const streamed = await box.api('uploadFile', {
      method: 'POST',
      headers: { 'X-Agent-Id': agent.id, 'X-File-Name': 'big.bin' },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 51; i += 1) controller.enqueue(new Uint8Array(1024 * 1024));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    const { entries } = (await box.call('openAgent', { id: agent.id })).body as { entries: SequencedEntry[] };
    expect(entries.filter((entry) => entry.kind === 'user-attachment')).toHaveLength(0);
  });

  it('streams an ingested attachment by its sha256', async () => {
    const agent = await createAgent('Attachment agent');
    const sandbox = agentPaths(box.dataDir, agent.id).sandbox;
    await fs.promises.mkdir(sandbox, { recursive: true });
    await fs.promises.writeFile(path.join(sandbox, 'report.txt'), 'the report\n');
    const stream = await openStream(agent.id);
    const url = pathToFileURL(path.join(sandbox, 'report.txt')).href;
    await box.call('sendPrompt', { agentId: agent.id, prompt: `attach:${url}`, clientNonce: 'att' });
    const sent = await awaitSend(stream, (message) => message.type === 'attachment');
    await stream.cancel();
    const sha256 = (sent.message as { sha256?: string }).sha256;
    expect(sha256).toMatch(/^[0-9a-f]{64}$/);

    const response = await box.api(`attachment?agentId=${agent.id}&sha256=${sha256}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(response.headers.get('content-security-policy')).toContain('sandbox');
    expect(await response.text()).toBe('the report\n');
  });

  it('never serves a path outside the agent attachment and sandbox folders', async () => {
    const agent = await createAgent('Traversal agent');
    const paths = agentPaths(box.dataDir, agent.id);
    await fs.promises.mkdir(paths.attachments, { recursive: true });
    // A link planted in the attachment folder that points at the agent's ledger.
    const planted = 'a'.repeat(64);
    await fs.promises.symlink(paths.storeDb, path.join(paths.attachments, `${planted}.db`));

    const attempts: Array<[string, number]> = [
      [`attachment?agentId=${agent.id}&sha256=${planted}`, 404],
      [`attachment?agentId=${agent.id}&sha256=${'b'.repeat(64)}`, 404],
      [`attachment?agentId=${agent.id}&sha256=..%2F..%2Fstore.db`, 400],
      [`attachment?agentId=${agent.id}&sha256=${'A'.repeat(64)}`, 400],
      [`attachment?agentId=..&sha256=${planted}`, 400],
      [`attachment?agentId=${agent.id}`, 400],
      [`upload?agentId=${agent.id}&entryId=..%2F..%2Fstore.db`, 404],
      [`upload?agentId=${agent.id}&entryId=t1u`, 404],
      [`upload?agentId=..%2F..&entryId=x`, 400],
    ];
    for (const [route, status] of attempts) {
      const response = await box.api(route);
      expect(response.status, route).toBe(status);
      expect(await response.text(), route).not.toContain('SQLite format');
    }
  });
});

describe('startGateway', () => {
  /** A second gateway over the test box's host, on its own data dir and a free port. */
  const ownGateway = (dataDir: string, options: Partial<GatewayOptions> = {}) =>
    startGateway({
      host: box.host,
      files: { attachment: vi.fn(), upload: vi.fn() },
      dataDir,
      webRoot: box.webRoot,
      version: 't',
      port: 0,
      ...options,
    });

  it('refuses to bind anything but loopback', async () => {
    const dataDir = await makeTempDir('sendbox-bind-');
    for (const bindHost of ['0.0.0.0', '::', '192.168.1.10', 'example.com']) {
      await expect(ownGateway(dataDir, { bindHost }), bindHost).rejects.toThrow(GatewayStartError);
    }
    expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  });

  it('says which port is taken and leaves the running gateway’s descriptor alone', async () => {
    const before = await fs.promises.readFile(path.join(box.dataDir, 'gateway.json'), 'utf8');
    const refusal = ownGateway(box.dataDir, { port: box.gateway.port });
    await expect(refusal).rejects.toThrow(
      `port ${box.gateway.port} on 127.0.0.1 is already in use by another program (a sendbox on another data dir, perhaps); stop it, or start this one on another port: --port <number>, or --port 0 for any free one`,
    );
    expect(await fs.promises.readFile(path.join(box.dataDir, 'gateway.json'), 'utf8')).toBe(before);
  });

  it('on close does not wait for sockets that never sent a request, nor for idle keep-alive ones', async () => {
    const dataDir = await makeTempDir('sendbox-close-idle-');
    const gateway = await ownGateway(dataDir);
    // A browser's preconnect: a socket that sends nothing (Node's closeIdleConnections leaves it open).
    const silent = net.connect(gateway.port, '127.0.0.1');
    await once(silent, 'connect');
    const silentClosed = once(silent, 'close');
    // A keep-alive socket after one answered request.
    const kept = net.connect(gateway.port, '127.0.0.1');
    await once(kept, 'connect');
    const keptClosed = once(kept, 'close');
    kept.write(
      `POST /api/listAgents HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\n` +
        `Authorization: Bearer ${gateway.token}\r\nContent-Length: 2\r\n\r\n{}`,
    );
    const [head] = (await once(kept, 'data')) as [Buffer];
    expect(head.toString()).toMatch(/^HTTP\/1\.1 200/);
    const started = performance.now();
    await gateway.close();
    expect(performance.now() - started).toBeLessThan(SHUTDOWN_GRACE_MS / 2);
    await silentClosed;
    await keptClosed;
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  });

  it('on close answers a request whose headers were still arriving', async () => {
    const dataDir = await makeTempDir('sendbox-close-partial-');
    const gateway = await ownGateway(dataDir);
    const socket = net.connect(gateway.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`POST /api/listAgents HTTP/1.1\r\nHost: 127.0.0.1:${gateway.port}\r\n`);
    // The gateway runs in this process: by the time the timer fires it has read the first part.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answered = Promise.race([
      once(socket, 'data') as Promise<[Buffer]>,
      once(socket, 'close').then(() => {
        throw new Error('the gateway closed the socket without answering');
      }),
    ]);
    const closed = gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 200)); // a few sweeps of idle sockets
    socket.write(`Authorization: Bearer ${gateway.token}\r\nContent-Length: 2\r\n\r\n{}`);
    const [head] = await answered;
    expect(head.toString()).toMatch(/^HTTP\/1\.1 200/);
    await closed;
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  });

  it('on close ends event streams, stops listening and removes only its own gateway.json', async () => {
    const dataDir = await makeTempDir('sendbox-close-');
    const gateway = await ownGateway(dataDir);
    const response = await fetch(new URL('api/events', gateway.url), {
      headers: { Authorization: `Bearer ${gateway.token}` },
    });
    const stream = new SseReader(response);
    await gateway.close();
    expect(await stream.next()).toBeNull();
    expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
    await expect(fetch(gateway.url)).rejects.toThrow();

    // A descriptor that another gateway wrote since is not ours to remove.
    await writeGatewayDescriptor(dataDir, { host: '127.0.0.1', port: 1, token: 'someone-else' });
    expect(await removeGatewayDescriptor(dataDir, gateway.token)).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(true);
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  });
});

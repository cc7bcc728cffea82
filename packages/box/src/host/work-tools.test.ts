/**
 * The work tools through the real box: the catalog offers them, the scripted model calls them, the
 * sandbox is real, the JSONL records are read back by txcript's grok_bot codec, and what the model
 * reads (live and after a restart) comes from each tool's own reading.
 */
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { grokBot } from '@sendbox/txcript';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { runProcess } from '../../../txcript/test/run-process.ts';
import { textPdfPages } from '../cli/demo-pdf.ts';
import type { ModelMessage } from '../providers/types.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { writeProfile, readProfile } from '../stores/files/profile.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { hostFixture, lastToolOutputs, type HostFixture } from '../testing/host-fixture.ts';
import { createAgentHost } from './agent-host.ts';
import { openAiCompatibleProvider } from '../providers/index.ts';
import { startOpenAiTestServer } from '../testing/openai-server.ts';

const txcriptBin = fileURLToPath(new URL('../../../../node_modules/.bin/txcript', import.meta.url));
let fx: HostFixture | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const call = (name: string, input: Record<string, unknown>) => ({ toolCalls: [{ name, input }] });
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const toolEntries = (entries: SequencedEntry[]) =>
  entries.filter((e) => e.kind === 'tool-call') as Array<SequencedEntry & Record<string, unknown>>;
const offered = (fixture: HostFixture, request = 0) =>
  fixture.model.requests[request]!.tools.map((tool) => tool.name);

/** The tool results the model read in request `index`, as the provider got them. */
function toolResults(fixture: HostFixture, index: number) {
  const messages = fixture.model.requests[index]!.messages;
  return messages.flatMap((m) => (m.role === 'tool' ? m.content : []));
}

async function serve(
  host: string,
  handle: (url: string, headers: IncomingHttpHeaders) => { type: string; body: string; status?: number },
) {
  const server = createServer((req, res) => {
    const answer = handle(req.url ?? '/', req.headers);
    if (answer.status && answer.status >= 300 && answer.status < 400) {
      res.writeHead(answer.status, { location: answer.body });
      res.end();
      return;
    }
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type });
    res.end(answer.body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 10, g: 200, b: 30 } } })
    .png()
    .toBuffer();

describe('the file tools in a real box', () => {
  it('edit, grep, glob, ls and delete run on the sandbox, never through a planted link', async () => {
    fx = await hostFixture([
      call('edit', { path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' }),
      call('edit', { path: 'notes.txt', old_string: 'missing', new_string: 'x' }),
      call('edit', { path: 'twice.txt', old_string: 'dup', new_string: 'one' }),
      call('grep', { pattern: 'needle' }),
      call('glob', { pattern: '**/*.txt' }),
      call('ls', {}),
      call('delete', { path: 'outside-link' }),
      call('delete', { path: 'gone.txt' }),
      reply,
      { text: '' },
    ]);
    const outside = path.join(fx.dataDir, 'outside');
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, 'secret.txt'), 'needle outside the sandbox\n');
    await mkdir(path.join(fx.sandbox, 'src'), { recursive: true });
    await writeFile(path.join(fx.sandbox, 'notes.txt'), 'first alpha line\nsecond line\n');
    await writeFile(path.join(fx.sandbox, 'twice.txt'), 'dup and dup\n');
    await writeFile(path.join(fx.sandbox, 'src', 'code.txt'), 'a needle here\n');
    await writeFile(path.join(fx.sandbox, 'gone.txt'), 'bye\n');
    await symlink(outside, path.join(fx.sandbox, 'outside-link'));

    await fx.prompt('work on the files');

    expect(await readFile(path.join(fx.sandbox, 'notes.txt'), 'utf8')).toBe(
      'first ALPHA line\nsecond line\n',
    );
    expect(await readFile(path.join(fx.sandbox, 'twice.txt'), 'utf8')).toBe('dup and dup\n');
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toContain('needle');
    await expect(readFile(path.join(fx.sandbox, 'gone.txt'))).rejects.toThrow(/ENOENT/);

    // Every result the model read, from the last request (a reminder may follow the tool message).
    const results = toolResults(fx, fx.model.requests.length - 1).map((part) =>
      part.type === 'tool-result' && (part.output.type === 'text' || part.output.type === 'error-text')
        ? part.output.value
        : '',
    );
    const read = (i: number) => results[i - 1]!;
    expect(read(2)).toMatch(/old_string was not found in notes\.txt/);
    expect(read(3)).toMatch(/old_string occurs 2 times in twice\.txt/);
    // grep's own reading: path:line: text, and nothing from behind the link.
    expect(read(4)).toContain('src/code.txt:1: a needle here');
    expect(read(4)).not.toContain('outside the sandbox');
    expect(read(5)).toContain('src/code.txt');
    expect(read(5)).not.toContain('secret.txt');
    expect(read(6)).toMatch(/outside-link/);
    expect(read(6)).not.toContain('secret.txt');
    expect(read(7)).toMatch(/link/i);
    expect(read(8)).not.toMatch(/error/i);

    // The ledger rows: edit's diff for the tool row.
    const entries = toolEntries(await fx.entries());
    expect(entries.map((e) => `${String(e.name)}:${String(e.status)}`)).toEqual([
      'edit:success',
      'edit:error',
      'edit:error',
      'grep:success',
      'glob:success',
      'ls:success',
      'delete:error',
      'delete:success',
    ]);
    expect(entries[0]!.diff).toEqual(expect.stringContaining('+first ALPHA line'));

    // The JSONL under Grok Bot's names, read back by txcript's codec.
    const records = await fx.records();
    const names = records.flatMap((r) =>
      r.role === 'tool' ? (r.message as { content: Array<{ name: string }> }).content.map((b) => b.name) : [],
    );
    expect(names).toEqual(['edit', 'edit', 'edit', 'grep', 'glob', 'ls', 'delete', 'delete', 'send_message']);
    const parsed = grokBot.text.parse(await fx.jsonlText(), 'work.jsonl');
    const transcript = grokBot.codec.toCommon(parsed.records, { sessionId: fx.agentId });
    const uses = transcript.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_use'));
    expect(uses.length).toBe(9);
  });
});

describe('images and PDFs in a real box', () => {
  it('an uploaded image and a read PNG are image parts of the request; a text-only model gets a note', async () => {
    fx = await hostFixture([call('read', { path: 'chart.png' }), reply, { text: '' }]);
    await writeFile(path.join(fx.sandbox, 'chart.png'), await png(3000, 1000));
    await fx.host.uploadFile({ agentId: fx.agentId, fileName: 'shot.png', bytes: await png(20, 10) });
    await fx.prompt('what is in the screenshot and the chart?');

    const first = fx.model.requests[0]!.messages;
    const userParts = first
      .filter((m) => m.role === 'user')
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const uploaded = userParts.find((p) => p.type === 'image');
    expect(uploaded).toMatchObject({ type: 'image', mediaType: 'image/png' });

    const second = fx.model.requests[1]!.messages;
    const last = second.at(-1) as Extract<ModelMessage, { role: 'user' }>;
    expect(last.role).toBe('user');
    const image = (last.content as Array<{ type: string; image?: string }>).find((p) => p.type === 'image');
    const meta = await sharp(Buffer.from(image!.image!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([1568, 523]);
    expect(toolResults(fx, 1)[0]).toMatchObject({ output: { type: 'text' } });
    expect(JSON.stringify(toolResults(fx, 1)[0])).toContain('The image is in the next message');
    await fx.dispose();

    fx = await hostFixture([call('read', { path: 'chart.png' }), reply, { text: '' }], {
      env: { SENDBOX_MODEL_VISION: '0' },
    });
    await writeFile(path.join(fx.sandbox, 'chart.png'), await png(30, 10));
    await fx.host.uploadFile({ agentId: fx.agentId, fileName: 'shot.png', bytes: await png(20, 10) });
    await fx.prompt('what is in it?');
    const blind = JSON.stringify(fx.model.requests.map((r) => r.messages));
    expect(blind).not.toContain('"type":"image"');
    expect(blind).toContain('this model is set up as text-only');
    expect(fx.host.modelSettings()).toMatchObject({ vision: false, visionLockedByEnvironment: true });
  });

  it('reads a 3-page PDF in full and page by page', async () => {
    fx = await hostFixture([
      call('read', { path: 'report.pdf' }),
      call('read', { path: 'report.pdf', offset: 2, limit: 1 }),
      reply,
      { text: '' },
    ]);
    const pages = [1, 2, 3].map((n) => ({ title: `Chapter ${n}`, lines: [`text of page ${n}`] }));
    await writeFile(path.join(fx.sandbox, 'report.pdf'), textPdfPages(pages), 'latin1');
    await fx.prompt('read the report');
    const whole = lastToolOutputs(fx.model, 1).join('\n');
    expect(whole).toMatch(/Page 1 of 3[\s\S]*text of page 1[\s\S]*Page 3 of 3[\s\S]*text of page 3/);
    const second = lastToolOutputs(fx.model, 2).join('\n');
    expect(second).toContain('text of page 2');
    expect(second).not.toContain('text of page 1');
    expect(second).not.toContain('text of page 3');
  });
});

describe('the web tools in a real box', () => {
  it('web_search asks the SearXNG the operator named, and is not offered without a backend', async () => {
    const searx = await serve('127.0.0.1', (url) => ({
      type: 'application/json',
      body: JSON.stringify({
        results: [
          {
            title: 'Result for ' + new URL(url, 'http://x').searchParams.get('q'),
            url: 'https://example.org/a',
            content: 'A snippet.',
          },
        ],
      }),
    }));
    fx = await hostFixture([call('web_search', { searchTerm: 'sendbox' }), reply, { text: '' }], {
      env: { SENDBOX_SEARXNG_URL: searx },
    });
    await fx.prompt('search');
    expect(offered(fx)).toContain('web_search');
    expect(lastToolOutputs(fx.model, 1).join('\n')).toBe(
      '1. Result for sendbox\n   https://example.org/a\n   A snippet.',
    );
    expect(fx.host.modelSettings().webSearch).toEqual({ backend: 'searxng', howToEnable: '' });
    await fx.dispose();

    fx = await hostFixture([reply, { text: '' }]);
    await fx.prompt('search');
    expect(offered(fx)).not.toContain('web_search');
    expect(fx.host.modelSettings().webSearch.howToEnable).toMatch(/SENDBOX_SEARXNG_URL/);
  });

  it('web_search through a turn asks Brave with the operator key, which never reaches the model or the files', async () => {
    const key = 'brave-key-7Hq2ZpX9wLm4';
    const asked: Array<{ q: string | null; count: string | null; token: unknown }> = [];
    const brave = await serve('127.0.0.1', (url, headers) => {
      const params = new URL(url, 'http://x').searchParams;
      asked.push({ q: params.get('q'), count: params.get('count'), token: headers['x-subscription-token'] });
      if (!url.startsWith('/res/v1/web/search')) return { type: 'text/plain', status: 404, body: 'no' };
      if (params.get('q') === 'quota') {
        return { type: 'application/json', status: 429, body: '{"type":"ErrorResponse"}' };
      }
      return {
        type: 'application/json',
        body: JSON.stringify({
          type: 'search',
          web: {
            type: 'search',
            results: [
              {
                title: 'Ferns indoors',
                url: 'https://example.org/ferns',
                description: 'Keep <strong>ferns</strong> moist.',
              },
            ],
          },
        }),
      };
    });
    fx = await hostFixture(
      [
        call('web_search', { searchTerm: 'ferns' }),
        call('web_search', { searchTerm: 'quota' }),
        reply,
        { text: '' },
      ],
      { env: { BRAVE_SEARCH_API_KEY: key, SENDBOX_BRAVE_SEARCH_URL: brave } },
    );
    await fx.prompt('search for ferns');
    expect(offered(fx)).toContain('web_search');
    expect(fx.host.modelSettings().webSearch).toEqual({ backend: 'brave', howToEnable: '' });
    expect(asked).toEqual([
      { q: 'ferns', count: '8', token: key },
      { q: 'quota', count: '8', token: key },
    ]);
    expect(lastToolOutputs(fx.model, 1).join('\n')).toBe(
      '1. Ferns indoors\n   https://example.org/ferns\n   Keep ferns moist.',
    );
    expect(lastToolOutputs(fx.model, 2).join('\n')).toMatch(/Brave Search[\s\S]*429/);
    // The JSONL holds Grok Bot's result shapes; the operator's key is in no file and no request.
    const results = (await fx.records()).flatMap((record) => {
      const content = (record.message as { content?: unknown } | undefined)?.content;
      return Array.isArray(content)
        ? (content as Array<Record<string, unknown>>).filter(
            (block) => block.type === 'tool_result' && block.name === 'web_search',
          )
        : [];
    });
    expect(results.map((block) => block.result)).toEqual([
      {
        success: {
          references: [
            { title: 'Ferns indoors', url: 'https://example.org/ferns', chunk: 'Keep ferns moist.' },
          ],
        },
      },
      { error: { error: expect.stringMatching(/429/) as unknown } },
    ]);
    expect(await fx.jsonlText()).not.toContain(key);
    expect(JSON.stringify(await fx.entries())).not.toContain(key);
    expect(JSON.stringify(fx.model.requests)).not.toContain(key);
  });

  it("uses xAI's own search when the model in use is xAI's, from the environment or the settings panel", async () => {
    fx = await hostFixture([], { provider: undefined, env: { XAI_API_KEY: 'xai-env-key-1234' } });
    expect(fx.host.modelSettings().webSearch.backend).toBe('xai');
    await fx.dispose();

    fx = await hostFixture([], { provider: undefined, env: {} });
    expect(fx.host.modelSettings().webSearch.backend).toBeNull();
    await fx.host.updateModelSettings({ provider: 'xai', apiKey: 'xai-panel-key-1234' });
    expect(fx.host.modelSettings().webSearch.backend).toBe('xai');
    await fx.host.updateModelSettings({
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:9/v1',
      model: 'local',
    });
    expect(fx.host.modelSettings().webSearch).toMatchObject({
      backend: null,
      howToEnable: expect.stringMatching(/SENDBOX_SEARXNG_URL/) as string,
    });
  });

  it('web_fetch reads an allowed private host, refuses a redirect to a private address, and follows the profile switch', async () => {
    const other = await serve('127.0.0.3', () => ({ type: 'text/html', body: '<p>admin</p>' }));
    const wiki = await serve('127.0.0.2', (url) =>
      url === '/away'
        ? { type: '', status: 302, body: `${other}/admin` }
        : {
            type: 'text/html',
            body: '<html><head><title>Wiki</title></head><body><article><h1>Wiki</h1><p>The intranet page text.</p></article></body></html>',
          },
    );
    fx = await hostFixture(
      [
        call('web_fetch', { url: `${wiki}/home` }),
        call('web_fetch', { url: `${wiki}/away` }),
        reply,
        { text: '' },
      ],
      { env: { SENDBOX_WEB_ALLOW_PRIVATE_HOSTS: '127.0.0.2' } },
    );
    await fx.prompt('fetch');
    expect(lastToolOutputs(fx.model, 1).join('\n')).toMatch(
      /^# Wiki\nURL: http:\/\/127\.0\.0\.2:\d+\/home\n\n[\s\S]*The intranet page text\./,
    );
    expect(lastToolOutputs(fx.model, 2).join('\n')).toMatch(/127\.0\.0\.3/);
    expect(lastToolOutputs(fx.model, 2).join('\n')).not.toContain('admin</p>');

    const paths = agentPaths(fx.dataDir, fx.agentId);
    await writeProfile(paths.profile, { ...(await readProfile(paths.profile)), web: { fetch: 'off' } });
    fx.model.push(reply, { text: '' });
    await fx.prompt('fetch again');
    expect(offered(fx, 4)).not.toContain('web_fetch');
    expect(offered(fx, 4)).toContain('read');
  });
});

describe('web_fetch and secrets, and the download cap, in a real box', () => {
  const SECRET = 'wiki-T0ken-Zq8v41';

  it('scrubs a secret the page shows from everything it reaches, and cuts a 20 MB page at 5 MB', async () => {
    let sent = 0;
    const server = createServer((req, res) => {
      if (req.url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.from('All work and no play makes Jack a dull boy.\n'.repeat(1000));
        const pump = () => {
          while (sent < 20 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<html><head><title>Token ${SECRET}</title></head><body><article><h1>Setup</h1><p>Your wiki token is ${SECRET}; keep it safe and paste it in the settings of the client you use.</p></article></body></html>`,
      );
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    const base = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
    fx = await hostFixture(
      [
        call('send_message', { type: 'secret-request', secret: { label: 'Wiki token', name: 'WIKI_TOKEN' } }),
        {
          toolCalls: [
            { name: 'web_fetch', input: { url: `${base}/setup` } },
            { name: 'web_fetch', input: { url: `${base}/huge` } },
          ],
        },
        reply,
        { text: '' },
      ],
      { env: { SENDBOX_WEB_ALLOW_PRIVATE_HOSTS: '127.0.0.2' } },
    );
    await fx.prompt('read the wiki setup page');
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: SECRET });
    await fx.host.idle(fx.agentId);

    // The first request after the fetches that is the agent's own (a 5 MB page may make the box
    // summarise first: that call's system prompt is the summariser's).
    const after = fx.model.requests.findIndex(
      (r, i) => i >= 2 && !String(r.system).startsWith('You write the memory of an agent'),
    );
    const results = toolResults(fx, after).flatMap((part) =>
      part.type === 'tool-result' && part.toolName === 'web_fetch' && part.output.type === 'text'
        ? [part.output.value]
        : [],
    );
    expect(results[0]).toContain('Your wiki token is [secret WIKI_TOKEN redacted]');
    expect(results[1]).toMatch(
      /the page is larger than 5242880 bytes and only its first 5242880 were downloaded/,
    );
    expect(sent).toBeLessThan(12 * 1024 * 1024);

    const paths = agentPaths(fx.dataDir, fx.agentId);
    const everything = [
      await fx.jsonlText(),
      JSON.stringify(await fx.entries()),
      JSON.stringify(fx.events),
      JSON.stringify(fx.model.requests),
    ].join('\n');
    expect(everything).toContain('[secret WIKI_TOKEN redacted]');
    expect(everything).not.toContain(SECRET);
    await fx.host.close();
    expect(await readFile(paths.storeDb)).not.toContain(Buffer.from(SECRET));
  });
});

describe('todos', () => {
  it('survive a restart: rebuilt from the JSONL, returned by the host, carried live on the ledger entry', async () => {
    fx = await hostFixture([
      call('update_todos', {
        todos: [
          { id: '1', content: 'Read the spec', status: 'completed' },
          { id: '2', content: 'Write the code', status: 'in_progress' },
        ],
      }),
      reply,
      { text: '' },
    ]);
    await fx.prompt('plan it');
    const list = [
      { id: '1', content: 'Read the spec', status: 'completed' },
      { id: '2', content: 'Write the code', status: 'in_progress' },
    ];
    const entry = toolEntries(await fx.entries()).find((e) => e.name === 'update_todos');
    expect(entry?.todos).toEqual(list);
    expect(await fx.host.todos(fx.agentId)).toMatchObject(list);

    await fx.host.close();
    const again = await createAgentHost({ dataDir: fx.dataDir, provider: fx.model, env: {} });
    fx.host = again;
    const todos = await again.todos(fx.agentId);
    expect(todos).toMatchObject(list);
    expect(todos[0]!.createdAt).toBeGreaterThan(0);
    // A duplicate copies the JSONL, and so the list.
    const copy = await again.duplicateAgent(fx.agentId);
    expect(await again.todos(copy.id)).toMatchObject(list);
  });
});

describe('after a restart', () => {
  it('the model reads each result by its tool’s own reading, as it did live', async () => {
    fx = await hostFixture([call('grep', { pattern: 'needle' }), reply, { text: '' }, reply, { text: '' }]);
    await writeFile(path.join(fx.sandbox, 'a.txt'), 'one needle\n');
    await fx.prompt('find it');
    const live = toolResults(fx, 1)[0];
    expect(live).toMatchObject({
      output: { type: 'text', value: expect.stringContaining('a.txt:1: one needle') as string },
    });

    await fx.host.close();
    fx.host = await createAgentHost({ dataDir: fx.dataDir, provider: fx.model, env: {} });
    await fx.host.openAgent(fx.agentId);
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'again', clientNonce: 'again' });
    await fx.host.idle(fx.agentId);
    const rebuilt = toolResults(fx, fx.model.requests.length - 1).find(
      (part) => part.type === 'tool-result' && part.toolName === 'grep',
    );
    expect(rebuilt).toMatchObject({ output: live!.type === 'tool-result' ? live!.output : {} });
  });
});

describe('images on the OpenAI-compatible wire', () => {
  it('sends an upload and a read image as image_url data URLs in user messages', async () => {
    const server = await startOpenAiTestServer();
    try {
      server.reply(
        { kind: 'message', toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path":"chart.png"}' }] },
        {
          kind: 'message',
          toolCalls: [{ id: 'c2', name: 'send_message', arguments: '{"type":"text","content":"ok"}' }],
        },
        { kind: 'message', content: '' },
      );
      const provider = openAiCompatibleProvider({
        baseURL: server.baseURL,
        model: 'local',
        timeoutMs: 5_000,
        maxRetries: 0,
      });
      fx = await hostFixture([], { provider });
      await writeFile(path.join(fx.sandbox, 'chart.png'), await png(40, 20));
      await fx.host.uploadFile({ agentId: fx.agentId, fileName: 'shot.png', bytes: await png(20, 10) });
      await fx.prompt('look');
      type Wire = { role: string; content: unknown; tool_call_id?: string };
      const imageUrls = (message: Wire | undefined) =>
        Array.isArray(message?.content)
          ? (message.content as Array<{ type: string; image_url?: { url: string } }>)
              .filter((part) => part.type === 'image_url')
              .map((part) => part.image_url!.url)
          : [];
      const first = server.requests[0]!.body.messages as Wire[];
      expect(imageUrls(first.findLast((m) => m.role === 'user'))).toEqual([
        expect.stringMatching(/^data:image\/png;base64,iVBOR/),
      ]);
      const second = server.requests[1]!.body.messages as Wire[];
      const toolAt = second.findIndex((m) => m.role === 'tool' && m.tool_call_id === 'c1');
      expect(second[toolAt]!.content).toEqual(expect.stringContaining('The image is in the next message'));
      expect(second[toolAt + 1]!.role).toBe('user');
      expect(imageUrls(second[toolAt + 1])).toEqual([expect.stringMatching(/^data:image\/png;base64,iVBOR/)]);
    } finally {
      await server.close();
    }
  });
});

describe('every work tool’s record', () => {
  it('is read back by txcript’s grok_bot codec and shown by `txcript view` by its shape', async () => {
    const searx = await serve('127.0.0.1', () => ({
      type: 'application/json',
      body: JSON.stringify({
        results: [{ title: 'Fern care', url: 'https://example.org/ferns', content: 'Water weekly.' }],
      }),
    }));
    const wiki = await serve('127.0.0.2', () => ({
      type: 'text/html',
      body: '<html><head><title>Wiki home</title></head><body><article><h1>Wiki home</h1><p>The intranet front page text.</p></article></body></html>',
    }));
    fx = await hostFixture(
      [
        {
          toolCalls: [
            { name: 'edit', input: { path: 'notes.txt', old_string: 'alpha', new_string: 'ALPHA' } },
            { name: 'grep', input: { pattern: 'needle' } },
            { name: 'glob', input: { pattern: '*.txt' } },
            { name: 'ls', input: {} },
            { name: 'delete', input: { path: 'gone.txt' } },
            { name: 'read', input: { path: 'shot.png' } },
            { name: 'read', input: { path: 'report.pdf' } },
            { name: 'web_search', input: { searchTerm: 'ferns' } },
            { name: 'web_fetch', input: { url: `${wiki}/` } },
            {
              name: 'update_todos',
              input: { todos: [{ id: '1', content: 'Water the ferns', status: 'in_progress' }] },
            },
          ],
        },
        reply,
        { text: '' },
      ],
      { env: { SENDBOX_SEARXNG_URL: searx, SENDBOX_WEB_ALLOW_PRIVATE_HOSTS: '127.0.0.2' } },
    );
    await writeFile(path.join(fx.sandbox, 'notes.txt'), 'alpha and a needle\n');
    await writeFile(path.join(fx.sandbox, 'gone.txt'), 'bye\n');
    await writeFile(path.join(fx.sandbox, 'shot.png'), await png(40, 30));
    await writeFile(
      path.join(fx.sandbox, 'report.pdf'),
      textPdfPages([{ title: 'Report', lines: ['page one text'] }]),
      'latin1',
    );
    await fx.prompt('do everything');
    const statuses = toolEntries(await fx.entries()).map((e) => `${String(e.name)}:${String(e.status)}`);
    expect(
      statuses.every((s) => s.endsWith(':success')),
      statuses.join(' '),
    ).toBe(true);

    const parsed = grokBot.text.parse(await fx.jsonlText(), 'work.jsonl');
    const transcript = grokBot.codec.toCommon(parsed.records, { sessionId: fx.agentId });
    const results = transcript.messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
    expect(results.length).toBe(11); // ten tools and the send

    await fx.host.close();
    const view = await runProcess(txcriptBin, ['view', '--from', 'grok_bot', fx.agentId], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fx.dataDir,
        TXCRIPT_GROK_BOT_ROOT: path.join(fx.dataDir, 'agent-transcripts'),
        TXCRIPT_GROK_BOT_AGENTS: path.join(fx.dataDir, 'agents'),
        NO_COLOR: '1',
        TZ: 'UTC',
      },
      cwd: fx.dataDir,
    });
    expect(view.stderr).toBe('');
    const shown = view.stdout;
    for (const expected of [
      '1 replacement(s), +1 -1', // edit
      '+ALPHA and a needle',
      'notes.txt:1: ALPHA and a needle', // grep
      'gone.txt', // delete (and ls before it)
      '[image: image/png, 40×30', // read of an image, never its base64
      'page one text', // read of a PDF
      'Fern care <https://example.org/ferns> — Water weekly.', // web_search
      'Wiki home', // web_fetch
      'The intranet front page text.',
      '[~] Water the ferns', // update_todos
    ])
      expect(shown, expected).toContain(expected);
    expect(shown).not.toMatch(/iVBORw0KGgo/);
  });
});

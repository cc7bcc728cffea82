/**
 * DEV AID ONLY — not the gateway, and no test relies on it. Serves `dist/` plus an in-memory
 * fake of the documented gateway API (docs/gateway.md) on 127.0.0.1, so the renderer can be
 * looked at before the real gateway exists. The page gets the same CSP the gateway sends.
 *
 *   npx tsx packages/web/scripts/preview-fixture.ts [--port 5178] [--no-model]
 *
 * Agents: "Every bubble" (each entry kind and send type, with PDF, Word, Excel and image
 * attachments), "Big ledger" (10,000 entries) and a read-only demo.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { samplePdf, samplePng, sampleDocx, sampleXlsx, zip } from '../test/sample-files.ts';
import { CONTENT_SECURITY_POLICY as CSP } from '../../box/src/gateway/static-ui.ts';
import type { RosterRow } from '../src/api/types.ts';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

type Entry = Record<string, unknown> & { id: string; kind: string; seq: number; timestampMs: number };
interface Agent {
  row: RosterRow;
  entries: Entry[];
  files: Map<string, { bytes: Buffer; type: string }>;
  uploads: Map<string, { bytes: Buffer; type: string }>;
}

const args = process.argv.slice(2);
const port = Number(args[args.indexOf('--port') + 1] || 5178) || 5178;
const modelConfigured = !args.includes('--no-model');
const agents = new Map<string, Agent>();
const listeners = new Set<{ agentId: string; send(event: string, data: unknown, id?: number): void }>();
let seqCounter = 0;

function agent(name: string, description: string, readOnly = false): Agent {
  const id = `agent-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const now = Date.now();
  const created: Agent = {
    row: {
      id,
      name,
      description,
      harness: 'box',
      updatedAt: now,
      lastActivityAt: now,
      lastEntry: null,
      unreadCount: 0,
      hasUnread: false,
      awaitingUserResponse: false,
      awaitingApproval: false,
      state: 'idle',
      readOnly,
    },
    entries: [],
    files: new Map(),
    uploads: new Map(),
  };
  agents.set(id, created);
  return created;
}

function append(
  target: Agent,
  entry: Record<string, unknown> & { id: string; kind: string },
  at = Date.now(),
): Entry {
  const full: Entry = { timestampMs: at, ...entry, seq: ++seqCounter };
  target.entries.push(full);
  target.row.lastActivityAt = at;
  const message = entry.message as { content?: unknown; file_name?: unknown; type?: unknown } | undefined;
  const text =
    [entry.content, entry.text, message?.content, message?.file_name, entry.file_name, message?.type].find(
      (value): value is string => typeof value === 'string',
    ) ?? entry.kind;
  if (entry.kind !== 'tool-call' && entry.kind !== 'turn-ended' && entry.kind !== 'thinking') {
    target.row.lastEntry = { kind: entry.kind, text: text.slice(0, 120) };
  }
  for (const listener of listeners)
    if (listener.agentId === target.row.id) listener.send('entry', full, full.seq);
  return full;
}

function setState(target: Agent, state: Agent['row']['state']): void {
  target.row.state = state;
  for (const listener of listeners) listener.send('state', { agentId: target.row.id, state });
}

function addFile(target: Agent, bytes: Buffer, type: string): string {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  target.files.set(sha256, { bytes, type });
  return sha256;
}

// ---- fixture agents ------------------------------------------------------------------------

async function seed(): Promise<void> {
  const every = agent('Every bubble', 'One of each entry kind and send type');
  const t0 = Date.now() - 3_600_000;
  let t = t0;
  const next = () => (t += 20_000);
  append(every, { id: 'tb', kind: 'notice', text: 'Agent created with model grok-4 (fixture)' }, next());
  append(
    every,
    {
      id: 't0u',
      kind: 'message',
      role: 'user',
      content: 'Can you summarise the quarter?\nAttach what you have.',
    },
    next(),
  );
  append(
    every,
    {
      id: 't0h',
      kind: 'message',
      role: 'user',
      content: 'HIDDEN GUIDANCE — must never render',
      hidden: true,
    },
    next(),
  );
  append(
    every,
    { id: 't0a0', kind: 'thinking', text: 'The user wants a summary. I will send text, then the files.' },
    next(),
  );
  append(
    every,
    { id: 't0c0', kind: 'tool-call', name: 'shell', status: 'success', summary: 'ls reports/ → 3 files' },
    next(),
  );
  append(
    every,
    {
      id: 't0c1',
      kind: 'tool-call',
      name: 'read_file',
      status: 'failure',
      summary: 'reports/missing.md: no such file',
    },
    next(),
  );
  append(
    every,
    {
      id: 't0s0',
      kind: 'send-message',
      message: {
        type: 'text',
        content: [
          '## Quarter summary',
          '',
          'Revenue is **up 12%**; see the [dashboard](https://example.com/dash) and the ~~old~~ new plan.',
          '',
          '| Metric | Q1 | Q2 |',
          '| --- | --- | --- |',
          '| Revenue | 1.2M | 1.35M |',
          '',
          '- [x] close books',
          '- [ ] hire',
          '',
          '```ts',
          'export function total(xs: number[]): number {',
          '  return xs.reduce((a, b) => a + b, 0); // sum',
          '}',
          '```',
          '',
          'Unsafe bits stay inert: <img src=x onerror=alert(1)> and [a bad link](javascript:alert(1)).',
          'Jump back to [your question](sand-msg:t0u).',
        ].join('\n'),
        images: [
          {
            url: `data:image/png;base64,${samplePng(240, 160, 200).toString('base64')}`,
            alt: 'Revenue by month',
          },
          {
            url: `data:image/png;base64,${samplePng(240, 160, 40).toString('base64')}`,
            alt: 'Costs by team',
          },
        ],
      },
    },
    next(),
  );
  const pdf = samplePdf();
  append(
    every,
    {
      id: 't0s1',
      kind: 'send-message',
      message: {
        type: 'attachment',
        url: 'file:///sandbox/report.pdf',
        file_name: 'report.pdf',
        size: pdf.length,
        media_type: 'application/pdf',
        sha256: addFile(every, pdf, 'application/pdf'),
      },
    },
    next(),
  );
  const docx = sampleDocx();
  const docxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  append(
    every,
    {
      id: 't0s2',
      kind: 'send-message',
      message: {
        type: 'attachment',
        url: 'file:///sandbox/notes.docx',
        file_name: 'notes.docx',
        size: docx.length,
        media_type: docxType,
        sha256: addFile(every, docx, docxType),
      },
    },
    next(),
  );
  const xlsx = await sampleXlsx();
  const xlsxType = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  append(
    every,
    {
      id: 't0s3',
      kind: 'send-message',
      message: {
        type: 'attachment',
        url: 'file:///sandbox/budget.xlsx',
        file_name: 'budget.xlsx',
        size: xlsx.length,
        media_type: xlsxType,
        sha256: addFile(every, xlsx, xlsxType),
      },
    },
    next(),
  );
  const png = samplePng(320, 200, 120);
  append(
    every,
    {
      id: 't0s4',
      kind: 'send-message',
      message: {
        type: 'attachment',
        url: 'file:///sandbox/chart.png',
        file_name: 'chart.png',
        alt: 'A chart of the quarter',
        size: png.length,
        media_type: 'image/png',
        sha256: addFile(every, png, 'image/png'),
      },
    },
    next(),
  );
  const zipBytes = zip({ 'a.txt': 'hello' });
  append(
    every,
    {
      id: 't0s5',
      kind: 'send-message',
      message: {
        type: 'attachment',
        url: 'file:///sandbox/archive.zip',
        file_name: 'archive.zip',
        size: zipBytes.length,
        media_type: 'application/zip',
        sha256: addFile(every, zipBytes, 'application/zip'),
      },
    },
    next(),
  );
  append(
    every,
    {
      id: 't0s6',
      kind: 'send-message',
      message: { type: 'cursor-agent', bcId: 'bc-5f2a91', title: 'Refactor billing service' },
    },
    next(),
  );
  append(
    every,
    {
      id: 't0s7',
      kind: 'send-message',
      message: {
        type: 'widget',
        widget: {
          prompt: 'Which format do you want?',
          helpText: 'Pick one; you can change it later.',
          options: [
            { label: 'Slides', value: 'slides', style: 'primary' },
            { label: 'Memo', value: 'memo', description: 'One page' },
            { label: 'Cancel', style: 'danger' },
          ],
          allowCustom: true,
        },
      },
    },
    next(),
  );
  append(every, { id: 't0e', kind: 'turn-ended' }, next());
  append(
    every,
    { id: 't1u', kind: 'message', role: 'user', content: 'memo', respondedValue: 't0s7' },
    next(),
  );
  append(
    every,
    {
      id: 't1s0',
      kind: 'send-message',
      message: {
        type: 'widget',
        widget: {
          prompt: 'Which sections should the memo cover?',
          options: [{ label: 'Revenue' }, { label: 'Costs' }, { label: 'Hiring' }],
          multiSelect: true,
          allowCustom: true,
        },
      },
    },
    next(),
  );
  append(
    every,
    {
      id: 't1s1',
      kind: 'send-message',
      message: {
        type: 'secret-request',
        secretRequest: {
          label: 'GitHub token',
          description: 'Used to open the pull request.',
          target: { kind: 'env', name: 'GITHUB_TOKEN' },
        },
      },
    },
    next(),
  );
  append(
    every,
    { id: 't1x', kind: 'send-message', message: { type: 'connector', connector: 'slack' } },
    next(),
  );
  append(
    every,
    {
      id: 't1ua0',
      kind: 'user-attachment',
      file_name: 'photo.png',
      file_path: 'uploads/photo.png',
      byteSize: png.length,
      media_type: 'image/png',
    },
    next(),
  );
  every.uploads.set('t1ua0', { bytes: samplePng(200, 200, 250), type: 'image/png' });
  every.row.awaitingUserResponse = true;
  every.row.unreadCount = 3;
  every.row.hasUnread = true;

  const big = agent('Big ledger', '10,000 entries, for the paint-time check');
  const start = Date.now() - 10_000 * 60_000;
  for (let i = 0; i < 10_000; i++) {
    const at = start + i * 60_000;
    if (i % 4 === 0)
      append(big, { id: `b${i}`, kind: 'message', role: 'user', content: `Question number ${i}` }, at);
    else if (i % 4 === 1)
      append(
        big,
        { id: `b${i}`, kind: 'tool-call', name: 'shell', status: 'success', summary: `step ${i}` },
        at,
      );
    else if (i % 4 === 2) append(big, { id: `b${i}`, kind: 'thinking', text: `thinking about ${i}` }, at);
    else
      append(
        big,
        {
          id: `b${i}`,
          kind: 'send-message',
          message: {
            type: 'text',
            content: `Answer **${i}** with a [link](https://example.com/${i}) and \`code\`.`,
          },
        },
        at,
      );
  }

  const demo = agent('Demo', 'A recorded conversation (read-only)', true);
  append(demo, { id: 'd0u', kind: 'message', role: 'user', content: 'What can you do?' });
  append(demo, {
    id: 'd0s0',
    kind: 'send-message',
    message: {
      type: 'text',
      content: 'I reply only through `send_message`: text, files, questions and secret requests.',
    },
  });
}

// ---- HTTP -----------------------------------------------------------------------------------

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
};

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function body(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function find(id: unknown): Agent | undefined {
  return typeof id === 'string' ? agents.get(id) : undefined;
}

function scriptedReply(target: Agent, prompt: string): void {
  setState(target, 'working');
  append(target, {
    id: `t${seqCounter}c`,
    kind: 'tool-call',
    name: 'shell',
    status: 'running',
    summary: 'thinking it over',
  });
  setTimeout(() => {
    append(target, {
      id: `t${seqCounter}s`,
      kind: 'send-message',
      message: { type: 'text', content: `You said: *${prompt}*` },
    });
    append(target, { id: `t${seqCounter}e`, kind: 'turn-ended' });
    setState(target, 'idle');
  }, 1200);
}

async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  // No sign-in here (a dev aid on loopback): any tab proof will do, but the page must send one.
  if (!req.headers['x-sendbox-session'])
    return json(res, 401, { error: 'missing X-Sendbox-Session header: open the URL the fixture printed' });
  const method = url.pathname.slice('/api/'.length);
  if (req.method === 'GET' && method === 'events') return events(req, res, url);
  if (req.method === 'GET' && (method === 'attachment' || method === 'upload')) {
    const target = find(url.searchParams.get('agentId'));
    const file =
      method === 'attachment'
        ? target?.files.get(url.searchParams.get('sha256') ?? '')
        : target?.uploads.get(url.searchParams.get('entryId') ?? '');
    if (!file) return json(res, 404, { error: 'no such file' });
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.bytes.length });
    res.end(file.bytes);
    return;
  }
  if (req.method !== 'POST') return json(res, 405, { error: 'use POST' });
  if (method === 'uploadFile') {
    const target = find(req.headers['x-agent-id']);
    if (!target) return json(res, 404, { error: 'unknown agent' });
    const bytes = await body(req);
    const name = decodeURIComponent(String(req.headers['x-file-name'] ?? 'file'));
    const id = `u${seqCounter + 1}`;
    const type = /\.png$/i.test(name)
      ? 'image/png'
      : /\.pdf$/i.test(name)
        ? 'application/pdf'
        : 'application/octet-stream';
    target.uploads.set(id, { bytes, type });
    const entry = append(target, {
      id,
      kind: 'user-attachment',
      file_name: name,
      file_path: `uploads/${name}`,
      byteSize: bytes.length,
      media_type: type,
    });
    return json(res, 200, { entry });
  }
  const input = JSON.parse((await body(req)).toString('utf8') || '{}') as Record<string, unknown>;
  switch (method) {
    case 'getStatus':
      return json(res, 200, {
        version: '0.1.0-fixture',
        model: modelConfigured
          ? { configured: true, provider: 'scripted', model: 'fixture', howToConfigure: '' }
          : {
              configured: false,
              provider: null,
              model: null,
              howToConfigure:
                '1. Get an API key at https://console.x.ai\n2. export XAI_API_KEY=<your key>\n3. Restart: sendbox serve',
            },
      });
    case 'listAgents':
      return json(
        res,
        200,
        [...agents.values()].map((a) => a.row),
      );
    case 'openAgent': {
      const target = find(input.id);
      if (!target) return json(res, 404, { error: `unknown agent ${String(input.id)}` });
      target.row.unreadCount = 0;
      target.row.hasUnread = false;
      return json(res, 200, { entries: target.entries });
    }
    case 'createAgent': {
      const created = agent(
        String(input.name),
        typeof input.description === 'string' ? input.description : '',
      );
      return json(res, 200, { agent: created.row });
    }
    case 'duplicateAgent': {
      const source = find(input.id);
      if (!source) return json(res, 404, { error: 'unknown agent' });
      const copy = agent(`${source.row.name} copy ${randomUUID().slice(0, 4)}`, source.row.description);
      copy.entries = source.entries.map((e) => ({ ...e }));
      copy.files = source.files;
      copy.uploads = source.uploads;
      return json(res, 200, { agent: copy.row });
    }
    case 'deleteAgent':
      if (!find(input.id)) return json(res, 404, { error: 'unknown agent' });
      agents.delete(String(input.id));
      return json(res, 200, { deleted: true });
    case 'sendPrompt': {
      const target = find(input.agentId);
      if (!target) return json(res, 404, { error: 'unknown agent' });
      if (target.row.readOnly) return json(res, 423, { error: 'read-only agent' });
      append(target, {
        id: `t${seqCounter}u`,
        kind: 'message',
        role: 'user',
        content: String(input.prompt),
        clientNonce: String(input.clientNonce),
      });
      scriptedReply(target, String(input.prompt));
      return json(res, 200, { accepted: true, duplicate: false });
    }
    case 'answerWidget':
    case 'submitSecret': {
      const target = find(input.agentId);
      if (!target) return json(res, 404, { error: 'unknown agent' });
      if (target.entries.some((e) => e.respondedValue === input.messageId))
        return json(res, 409, { error: 'already answered' });
      const secret = method === 'submitSecret';
      const answer = Array.isArray(input.answer) ? input.answer.join('\n') : String(input.answer);
      append(target, {
        id: `t${seqCounter}r`,
        kind: 'message',
        role: 'user',
        content: secret ? 'Secret saved' : answer,
        respondedValue: String(input.messageId),
        ...(secret ? { hidden: true } : {}),
      });
      return json(res, 200, secret ? { saved: true } : { accepted: true });
    }
    default:
      return json(res, 404, { error: `unknown method ${method}` });
  }
}

function events(req: IncomingMessage, res: ServerResponse, url: URL): void {
  const target = find(url.searchParams.get('agentId'));
  if (!target) return json(res, 404, { error: 'unknown agent' });
  const after = Number(url.searchParams.get('after') ?? 0);
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
  const listener = {
    agentId: target.row.id,
    send(event: string, data: unknown, id?: number) {
      res.write(`event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
    },
  };
  for (const entry of target.entries) if (entry.seq > after) listener.send('entry', entry, entry.seq);
  listeners.add(listener);
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
  req.on('close', () => {
    clearInterval(ping);
    listeners.delete(listener);
  });
}

async function serveStatic(res: ServerResponse, pathname: string): Promise<void> {
  const relative =
    pathname === '/'
      ? 'index.html'
      : normalize(pathname)
          .replace(/^(\.\.[/\\])+/, '')
          .slice(1);
  const file = join(DIST, relative.startsWith('assets/') ? relative : 'index.html');
  try {
    const bytes = await readFile(file);
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(bytes);
  } catch {
    res.writeHead(404).end('not found (run `npm run build -w @sendbox/web` first)');
  }
}

await seed();
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const done = url.pathname.startsWith('/api/') ? api(req, res, url) : serveStatic(res, url.pathname);
  done.catch((error: unknown) => {
    console.error(error);
    if (!res.headersSent) json(res, 500, { error: String(error) });
  });
});
server.listen(port, '127.0.0.1', () => {
  // The fragment gives the page a tab proof, as the real login redirect does (any will do here).
  console.log(
    `fixture gateway on http://127.0.0.1:${port}/#session=${'f'.repeat(43)} (model ${modelConfigured ? 'on' : 'off'})`,
  );
});

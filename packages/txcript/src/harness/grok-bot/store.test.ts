import { chmodSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FIXTURE,
  conversation,
  generateFixtureBox,
  line,
  userRecord,
  writeJsonl,
} from '../../../test/fixtures/grok-bot/generate.ts';
import type { BoxPaths } from '../../../test/fixtures/grok-bot/generate.ts';
import { hashTree } from '../../../test/fixtures/grok-bot/hash-tree.ts';
import type { Transcript } from '../../model/common.ts';
import { startServer } from '../../../test/fixtures/grok-bot/http-server.ts';
import { FileExistsError, GrokBotLoadError, createGrokBotStore, grokBot, scanJsonl } from './index.ts';
import { openLedgerForWrite } from './ledger-db.ts';
import { UnsafePathError } from '../session-id.ts';

let home: string;
let box: BoxPaths;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'grok-store-'));
  box = generateFixtureBox(home);
});
afterEach(async () => {
  chmodSync(join(box.transcripts, FIXTURE.unreadable), 0o755);
  await rm(home, { recursive: true, force: true });
});

describe('grok_bot store: discover', () => {
  it('lists the union of profiles and envelope transcripts, with titles, counts, locators and parents (C7, C8)', async () => {
    const { sessions } = await grokBot.store!(box.env).discover();
    const byId = new Map(sessions.map((s) => [s.id, s]));
    const expected: string[] = [
      FIXTURE.both,
      FIXTURE.jsonlOnly,
      FIXTURE.ledgerOnly,
      FIXTURE.emptyLedger,
      FIXTURE.noNameLedger,
      FIXTURE.parent,
      FIXTURE.subagent,
      FIXTURE.malformed,
      FIXTURE.crlf,
      FIXTURE.unreadable, // root reads a chmod-000 folder; see the next test for real unreadable cases
    ];
    expect([...byId.keys()].sort()).toEqual(expected.sort());
    expect(byId.get(FIXTURE.both)).toMatchObject({
      harness: 'grok_bot',
      title: 'Profile Name',
      messageCount: 4,
      locator: join(box.transcripts, FIXTURE.both, `${FIXTURE.both}.jsonl`),
    });
    expect(byId.get(FIXTURE.jsonlOnly)).toMatchObject({
      title: 'What is the weather in Paris tomorrow and the day after, and should I bring an u',
      messageCount: 7,
    });
    expect(byId.get(FIXTURE.jsonlOnly)!.title).toHaveLength(80);
    expect(byId.get(FIXTURE.ledgerOnly)).toMatchObject({
      title: 'Ledger Bot',
      messageCount: 3, // what view shows: the prompt, and the send as a call and its result
      locator: join(box.agents, FIXTURE.ledgerOnly),
      lastActivity: new Date(1_788_485_401_000).toISOString(),
    });
    expect(byId.get(FIXTURE.emptyLedger)).toMatchObject({ title: 'Marcus', messageCount: 0 });
    expect(byId.get(FIXTURE.noNameLedger)).toMatchObject({ title: 'ledger title text', messageCount: 3 });
    expect(byId.get(FIXTURE.subagent)).toMatchObject({
      title: 'subagent task prompt',
      parentId: FIXTURE.parent,
    });
    expect(byId.get(FIXTURE.parent)!.parentId).toBeUndefined();
    expect(byId.get(FIXTURE.malformed)).toMatchObject({ title: 'malformed middle', messageCount: 4 });
    expect(byId.get(FIXTURE.crlf)).toMatchObject({ title: 'carriage returns', messageCount: 4 });
  });

  it('never dates an agent with no messages 1970: the profile time, else the profile file time', async () => {
    const agent = async (id: string, profile: object): Promise<void> => {
      await mkdir(join(box.agents, id), { recursive: true });
      await writeFile(join(box.agents, id, 'profile.json'), JSON.stringify(profile));
      // A fresh box writes an unread state whose times are 0.
      const ledger = openLedgerForWrite(join(box.agents, id, 'store.db'));
      ledger.setKv('unreadState', {
        lastActivityAt: 0,
        lastViewedAt: 0,
        isManuallyUnread: false,
        unreadCount: 0,
      });
      ledger.close();
    };
    await agent('agent-fresh-updated', { name: 'Fresh', updatedAt: 1_790_000_000_000, createdAt: 1 });
    await agent('agent-fresh-created', { name: 'Fresh too', createdAt: '2026-10-01T08:00:00.000Z' });
    await agent('agent-fresh-bare', { name: 'Bare' });
    const { sessions } = await createGrokBotStore(box.env).discover({ cache: false });
    const byId = new Map(sessions.map((x) => [x.id, x]));
    expect(byId.get('agent-fresh-updated')!.lastActivity).toBe(new Date(1_790_000_000_000).toISOString());
    expect(byId.get('agent-fresh-created')!.lastActivity).toBe('2026-10-01T08:00:00.000Z');
    const profileTime = (
      await stat(join(box.agents, 'agent-fresh-bare', 'profile.json'))
    ).mtime.toISOString();
    expect(byId.get('agent-fresh-bare')!.lastActivity).toBe(profileTime);
    for (const x of sessions) expect(x.lastActivity ?? '', x.id).not.toMatch(/^1970/);
  });

  it('orders sessions newest first, then by id in code-unit order (as list does), not by locale', async () => {
    const at = new Date('2031-01-02T03:04:05Z');
    // Code units put 'Z' before 'a' and '-' before '_'; a locale's collation puts them the other way.
    const ids = ['agent-Z1', 'agent-a1', 'agent_a0'];
    for (const id of [...ids].reverse()) {
      const file = writeJsonl(box, id, conversation(`hello from ${id}`).join('\n') + '\n');
      await utimes(file, at, at);
    }
    const { sessions } = await createGrokBotStore(box.env).discover({ cache: false });
    expect(sessions.slice(0, 3).map((s) => s.id)).toEqual(ids);
  });

  it('skips broken symlinks, files where folders belong, escaping symlinks and unreadable profiles with warnings', async () => {
    await mkdir(join(box.agents, 'agent-bad-profile', 'profile.json'), { recursive: true });
    const { sessions, warnings } = await createGrokBotStore(box.env).discover();
    const ids = sessions.map((s) => s.id);
    for (const id of [
      FIXTURE.brokenLink,
      FIXTURE.fileNotDir,
      FIXTURE.escaping,
      FIXTURE.notEnvelope,
      'agent-bad-profile',
    ]) {
      expect(ids).not.toContain(id);
    }
    const bySource = new Map(warnings.map((w) => [w.source, w.message]));
    expect(bySource.get(join(box.transcripts, FIXTURE.brokenLink))).toBe('broken symlink; skipped');
    expect(bySource.get(join(box.transcripts, FIXTURE.fileNotDir))).toMatch(/not a session folder/);
    expect(bySource.get(join(box.transcripts, FIXTURE.escaping))).toMatch(/outside/);
    expect(bySource.get(join(box.agents, 'agent-bad-profile', 'profile.json'))).toMatch(
      /cannot read profile: .*EISDIR/,
    );
    // Sidecars are not sessions and not warnings.
    expect(warnings.some((w) => w.source.includes('journal-mode'))).toBe(false);
    if (process.getuid?.() !== 0) {
      expect(ids).not.toContain(FIXTURE.unreadable);
      expect(bySource.get(join(box.transcripts, FIXTURE.unreadable))).toMatch(/unreadable/);
    }
  });

  it('reports progress and returns nothing, without warnings, for a box that does not exist', async () => {
    const seen: [number, number][] = [];
    await createGrokBotStore(box.env).discover({ onProgress: (d, t) => seen.push([d, t]) });
    expect(seen.at(-1)).toEqual([seen.length, seen.length]);
    expect(await createGrokBotStore({ HOME: join(home, 'nowhere') }).discover()).toEqual({
      sessions: [],
      warnings: [],
    });
  });

  it('honours TXCRIPT_GROK_BOT_ROOT / GROK_BOT_TRANSCRIPTS and TXCRIPT_GROK_BOT_AGENTS', async () => {
    const env = {
      HOME: join(home, 'nowhere'),
      GROK_BOT_TRANSCRIPTS: box.transcripts,
      TXCRIPT_GROK_BOT_AGENTS: box.agents,
    };
    const { sessions } = await createGrokBotStore(env).discover();
    expect(sessions.map((s) => s.id)).toContain(FIXTURE.ledgerOnly);
    expect(sessions.map((s) => s.id)).toContain(FIXTURE.crlf);
    const only = await createGrokBotStore({
      HOME: join(home, 'nowhere'),
      TXCRIPT_GROK_BOT_ROOT: box.transcripts,
    }).discover();
    expect(only.sessions.map((s) => s.id)).not.toContain(FIXTURE.ledgerOnly);
  });

  it('scans lines longer than a read chunk for the envelope, title and subagent link', async () => {
    const big = 'x'.repeat(700_000);
    const child = 'sand-subagent-11111111-2222-4333-8444-555555555555';
    const path = writeJsonl(
      box,
      'agent-long-lines',
      [
        userRecord(`[t0u]\nlong ${big}`),
        line({
          role: 'tool',
          message: {
            content: [
              { type: 'tool_result', name: 'task', result: { success: { agentId: child, pad: big } } },
            ],
          },
        }),
        '',
        line({ role: 'assistant', message: { content: [{ type: 'text', text: big }] } }),
      ].join('\n'),
    );
    const scan = await scanJsonl(path, true);
    expect(scan).toMatchObject({ envelope: true, messageCount: 3, subagentIds: [child] });
    expect(scan.title).toBe(`long ${'x'.repeat(75)}`);
  });
});

describe('grok_bot store: subagent links', () => {
  it('links a child named by a failed or interrupted task result, as by a successful one', async () => {
    const ids = ['1', '2', '3'].map((n) => `sand-subagent-${n.repeat(8)}-2222-4333-8444-555555555555`);
    const results = [
      { success: { agentId: ids[0], isBackground: false } },
      { failure: { agentId: ids[1], error: 'the model call failed' } },
      { error: { error: 'This call was interrupted', agentId: ids[2] } },
    ];
    const path = writeJsonl(
      box,
      'agent-with-children',
      [
        userRecord('[t0u]\ndelegate'),
        ...results.map((result) =>
          line({ role: 'tool', message: { content: [{ type: 'tool_result', name: 'task', result }] } }),
        ),
      ].join('\n'),
    );
    expect((await scanJsonl(path, true)).subagentIds).toEqual(ids);
  });
});

describe('grok_bot store: load', () => {
  it('prefers the JSONL over the ledger', async () => {
    const r = await createGrokBotStore(box.env).load(FIXTURE.both);
    expect(r.source).toBe(join(box.transcripts, FIXTURE.both, `${FIXTURE.both}.jsonl`));
    expect(r.transcript.messages[0]!.content[0]).toEqual({ type: 'text', text: 'the transcript question' });
    expect(r.transcript.meta.id).toBe(FIXTURE.both);
  });

  it('falls back to the store.db ledger', async () => {
    const r = await createGrokBotStore(box.env).load(FIXTURE.ledgerOnly);
    expect(r.source).toBe(join(box.agents, FIXTURE.ledgerOnly, 'store.db'));
    expect(r.transcript.messages.map((m) => m.content[0]!.type)).toEqual(['text', 'tool_use', 'tool_result']);
  });

  it('loads a file with a malformed line and invalid UTF-8, warning with file and line', async () => {
    const r = await createGrokBotStore(box.env).load(FIXTURE.malformed);
    const path = join(box.transcripts, FIXTURE.malformed, `${FIXTURE.malformed}.jsonl`);
    expect(r.warnings).toMatchObject([{ source: path, line: 3 }]);
    expect(r.transcript.messages).toHaveLength(4);
    const bad = writeJsonl(box, 'agent-latin1', '');
    await writeFile(
      bad,
      Buffer.concat([
        Buffer.from(userRecord('caf').slice(0, -5)),
        Buffer.from([0xe9]),
        Buffer.from('"}]}}\n'),
      ]),
    );
    const latin = await createGrokBotStore(box.env).load('agent-latin1');
    expect(latin.warnings).toMatchObject([
      { source: bad, message: expect.stringMatching(/invalid UTF-8/) as string },
    ]);
    expect(latin.transcript.messages[0]!.content[0]).toEqual({ type: 'text', text: 'caf\ufffd' });
  });

  it('refuses unsafe ids and session folders that escape the root', async () => {
    const store = createGrokBotStore(box.env);
    for (const id of ['../etc', 'a/b', 'a\\b', 'a\0b', '..', '']) {
      await expect(store.load(id)).rejects.toThrow(UnsafePathError);
    }
    await expect(store.load(FIXTURE.escaping)).rejects.toThrow(/resolves to .*outside/);
  });

  it('falls back to the gateway: a bare array or {entries}', async () => {
    const entries = [{ id: 't0u', kind: 'message', role: 'user', content: 'via gateway', timestampMs: 1 }];
    const srv = await startServer((req, body, res) => {
      const { id } = JSON.parse(body) as { id: string };
      res.end(JSON.stringify(id === FIXTURE.emptyLedger ? entries : { entries, agent: { id } }));
    });
    try {
      const env = { ...box.env, TXCRIPT_GROK_BOT_GATEWAY: srv.url, TXCRIPT_GROK_BOT_TOKEN: 't' };
      const a = await createGrokBotStore(env).load(FIXTURE.emptyLedger);
      expect(a.source).toBe(`${srv.url}/api/openAgent`);
      expect(a.transcript.messages[0]!.content[0]).toEqual({ type: 'text', text: 'via gateway' });
      const b = await createGrokBotStore(env).load('agent-unknown-locally');
      expect(b.transcript.messages).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });

  it('names all three sources and why each failed', async () => {
    const srv = await startServer((req, _body, res) => {
      if (req.headers.authorization !== 'Bearer good') {
        res.statusCode = 401;
        res.end();
      } else if (req.url === '/api/openAgent') res.end('not json at all');
    });
    const store = (token: string, timeoutMs = 5000) =>
      createGrokBotStore(
        { ...box.env, TXCRIPT_GROK_BOT_GATEWAY: srv.url, TXCRIPT_GROK_BOT_TOKEN: token },
        { gatewayTimeoutMs: timeoutMs },
      );
    const failure = async (p: Promise<unknown>): Promise<GrokBotLoadError> => {
      const e = await p.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(GrokBotLoadError);
      return e as GrokBotLoadError;
    };
    try {
      const unauthorized = await failure(store('bad').load(FIXTURE.emptyLedger));
      expect(unauthorized.attempts.map((a) => a.reason)).toEqual([
        'file missing',
        'ledger empty',
        expect.stringMatching(/rejected the token \(HTTP 401\)/),
      ]);
      expect(unauthorized.message).toContain(
        join(box.transcripts, FIXTURE.emptyLedger, `${FIXTURE.emptyLedger}.jsonl`),
      );
      expect(unauthorized.message).toContain(join(box.agents, FIXTURE.emptyLedger, 'store.db'));
      const garbage = await failure(store('good').load(FIXTURE.notEnvelope));
      expect(garbage.attempts.map((a) => a.reason)).toEqual([
        'first record is not a {role, message} envelope',
        'no store.db',
        expect.stringMatching(/response is not JSON/),
      ]);
    } finally {
      await srv.close();
    }
    const slowSrv = await startServer(() => undefined);
    try {
      const slow = await failure(
        createGrokBotStore(
          { ...box.env, TXCRIPT_GROK_BOT_GATEWAY: slowSrv.url, TXCRIPT_GROK_BOT_TOKEN: 't' },
          { gatewayTimeoutMs: 100 },
        ).load('x1'),
      );
      expect(slow.attempts[2]!.reason).toMatch(/no response within 100 ms/);
    } finally {
      await slowSrv.close();
    }
    const down = await failure(
      createGrokBotStore({
        ...box.env,
        TXCRIPT_GROK_BOT_GATEWAY: slowSrv.url,
        TXCRIPT_GROK_BOT_TOKEN: 't',
      }).load('x1'),
    );
    expect(down.attempts[2]!.reason).toMatch(/unreachable/);
    const none = await failure(createGrokBotStore(box.env).load('x1'));
    expect(none.attempts[2]).toEqual({
      source: 'gateway openAgent',
      reason: expect.stringMatching(/no gateway configured/) as string,
    });
  });

  it('loads a new agent (empty ledger, no transcript) as an empty session when no gateway could know more', async () => {
    const loaded = await createGrokBotStore(box.env).load(FIXTURE.emptyLedger);
    expect(loaded.transcript.messages).toEqual([]);
    expect(loaded.transcript.meta.id).toBe(FIXTURE.emptyLedger);
    expect(loaded.source).toBe(join(box.agents, FIXTURE.emptyLedger, 'store.db'));
    expect(loaded.warnings).toEqual([]);
  });

  it('never modifies a source', async () => {
    const before = await hashTree(box.agentData);
    const store = createGrokBotStore(box.env);
    await store.discover();
    for (const id of [FIXTURE.both, FIXTURE.jsonlOnly, FIXTURE.ledgerOnly, FIXTURE.malformed, FIXTURE.crlf])
      await store.load(id);
    await store.load(FIXTURE.emptyLedger);
    const after = await hashTree(box.agentData);
    // SQLite may add -wal/-shm sidecars next to a database it reads; the files themselves stay identical.
    for (const [file, hash] of Object.entries(before)) expect(after[file], file).toBe(hash);
  });
});

describe('grok_bot store: save', () => {
  const transcript: Transcript = {
    meta: { id: 'saved-session', timestamp: '2026-09-10T10:00:00.000Z' },
    messages: [
      { role: 'user', timestamp: '2026-09-10T10:00:00.000Z', content: [{ type: 'text', text: 'hello' }] },
      { role: 'assistant', timestamp: '2026-09-10T10:00:02.000Z', content: [{ type: 'text', text: 'hi' }] },
    ],
  };

  it('writes a new JSONL session that loads back the same, and refuses to overwrite', async () => {
    const store = createGrokBotStore(box.env);
    const saved = await store.save(transcript);
    expect(saved).toEqual({
      id: 'saved-session',
      locator: join(box.transcripts, 'saved-session', 'saved-session.jsonl'),
    });
    expect((await store.load('saved-session')).transcript).toEqual(transcript);
    const bytes = await readFile(saved.locator);
    await expect(store.save({ ...transcript, messages: [] })).rejects.toThrow(FileExistsError);
    expect(await readFile(saved.locator)).toEqual(bytes);
    expect(await readdir(join(box.transcripts, 'saved-session'))).toEqual(['saved-session.jsonl']);
    expect((await stat(saved.locator)).mode & 0o777).toBe(0o600);
    await expect(store.save({ ...transcript, meta: { ...transcript.meta, id: '../x' } })).rejects.toThrow(
      UnsafePathError,
    );
    const listed = (await store.discover()).sessions.find((s) => s.id === 'saved-session');
    expect(listed).toMatchObject({ title: 'hello', messageCount: 2 });
    expect(conversation('x')).toHaveLength(4);
  });
});

/**
 * `txcript continue --with grok_bot`'s mint against the REAL box: host and
 * gateway on an ephemeral loopback port over a temp data dir; only the
 * model is scripted. Success, fault injection at every step after
 * createAgent (rollback leaves no agent), real faults (a UNIQUE row id, a
 * locked store), a gateway without deleteAgent, preflight, and metadata.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  DEFAULT_DESCRIPTION,
  DEFAULT_NAME,
  MAX_TITLE_NAME,
  MINT_STEPS,
  MintError,
  continuedDescription,
  createGrokBotStore,
  grokBotCodec,
  mintGrokBotAgent,
  parseMetadata,
  withBoxTools,
  type MintOptions,
  type Transcript,
} from '@sendbox/txcript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalAgentHost } from '../src/host/agent-host.ts';
import { scriptedProvider } from '../src/providers/scripted.ts';
import { referenceConversation, signature, startMintBox, texts, type MintBox } from './continue-support.ts';

let mb: MintBox;
const model = scriptedProvider([]);

beforeAll(async () => {
  mb = await startMintBox(model);
});

afterAll(async () => {
  await mb.close();
});

interface Row {
  id: string;
  name: string;
  description: string;
}

async function roster(): Promise<Row[]> {
  return (await mb.box.call('listAgents', {})).body as Row[];
}

function mint(transcript: Transcript, options: MintOptions = {}) {
  const warnings: string[] = [];
  const promise = mintGrokBotAgent(transcript, {
    env: mb.env,
    // A rollback whose deleteAgent outlasts the client's 5 s default (a loaded runner): the mint
    // then reports the delete as failed while the box goes on deleting, and the snapshot races it.
    timeoutMs: 60_000,
    onWarning: (w) => warnings.push(w),
    ...options,
  });
  return { promise, warnings };
}

/** Requests the gateway served so far for one method. */
function calls(method: string): number {
  return mb.box.requestLog.filter((line) => line.startsWith(`POST /api/${method} `)).length;
}

describe('mint into a live box', () => {
  it('creates an agent that lists, opens with its history, and loads back as the same conversation', async () => {
    const source = referenceConversation();
    const before = await mb.snapshot();
    const { promise, warnings } = mint(source);
    const result = await promise;
    expect(warnings).toEqual([]);

    const after = await mb.snapshot();
    expect(after.roster).toEqual([...before.roster, result.id].sort());
    const row = (await roster()).find((r) => r.id === result.id);
    expect(row).toMatchObject({
      name: 'Fix the pagination test',
      description: continuedDescription(source, undefined),
    });
    expect(row!.description).toContain(DEFAULT_DESCRIPTION);
    expect(result.jsonlPath).toBe(path.join(mb.transcriptsDir, result.id, `${result.id}.jsonl`));
    expect(result.storePath).toBe(path.join(mb.agentsDir, result.id, 'store.db'));
    expect(Object.keys(result.phaseMs)).toEqual(['preflight', 'create', ...MINT_STEPS]);

    // openAgent: the seeded ledger, as the UI gets it.
    const opened = await mb.box.call('openAgent', { id: result.id });
    expect(opened.status).toBe(200);
    const entries = (opened.body as { entries: Array<Record<string, unknown>> }).entries;
    expect(entries).toHaveLength(result.entries);
    expect(entries.map((e) => [e.id, e.kind, e.role ?? e.name ?? null])).toEqual([
      ['t0u', 'message', 'user'],
      ['t0a0', 'thinking', null],
      ['t0a1', 'message', 'assistant'],
      // The box's own tool names (continue/box-tools.ts): shell, edit.
      ['t0a2', 'tool-call', 'shell'],
      ['t0a3', 'tool-call', 'edit'],
      ['t0a4', 'tool-call', 'web_search'],
      ['t0a5', 'message', 'assistant'],
    ]);
    expect(entries[0]!.content).toBe('The pagination test fails; fix it.');
    expect(entries[1]!.text).toBe('Run the tests first to see the failure.');
    expect(entries[3]).toMatchObject({ status: 'failure', summary: 'npm test' });
    expect(entries[6]!.content).toBe('Fixed: the loop stopped one page late. The test passes now.');

    // txcript's own load of the new id reads the same conversation back (JSONL first).
    const loaded = await createGrokBotStore(mb.env).load(result.id);
    expect(loaded.source).toBe(result.jsonlPath);
    expect(loaded.transcript.meta.id).toBe(result.id);
    const boxed = withBoxTools(source);
    expect(signature(loaded.transcript)).toEqual(signature(boxed));
    expect(texts(loaded.transcript)).toEqual(texts(source));
    const expected = grokBotCodec.toCommon(
      grokBotCodec.fromCommon({ ...boxed, meta: { ...boxed.meta, id: result.id } }),
      { sessionId: result.id },
    );
    expect(loaded.transcript.messages).toEqual(expected.messages);
  });

  it("keeps the user's images as uploads in the agent's attachment store, served to the UI", async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const source = referenceConversation('with-image');
    source.messages[0]!.content.push({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') },
    });
    const { id } = await mint(source).promise;
    const sha256 = createHash('sha256').update(png).digest('hex');
    const stored = path.join(mb.agentsDir, id, 'attachments', `${sha256}.png`);
    expect(await readFile(stored)).toEqual(png);
    const opened = await mb.box.call('openAgent', { id });
    const entries = (opened.body as { entries: Array<Record<string, unknown>> }).entries;
    const upload = entries.find((e) => e.kind === 'user-attachment');
    expect(upload).toMatchObject({
      id: 't0ua0',
      file_name: 'image-1.png',
      file_path: stored,
      media_type: 'image/png',
      sha256,
    });
    const served = await fetch(
      new URL(
        `api/upload?agentId=${id}&entryId=t0ua0`,
        mb.env.TXCRIPT_GROK_BOT_GATEWAY!.replace(/\/?$/, '/'),
      ),
      { headers: { Authorization: `Bearer ${mb.env.TXCRIPT_GROK_BOT_TOKEN!}` } },
    );
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
  });

  it('lists the new agent by when it was continued, not by when its source last moved', async () => {
    const before = Date.now();
    const { id } = await mint(referenceConversation('sorted')).promise;
    const rows = (await mb.box.call('listAgents', {})).body as { id: string; lastActivityAt: number }[];
    expect(rows.find((r) => r.id === id)!.lastActivityAt).toBeGreaterThanOrEqual(before);
    expect(referenceConversation().meta.timestamp < new Date(before).toISOString()).toBe(true);
  });

  it('continues: the next turn of the minted agent sends the seeded history to the model', async () => {
    const { promise } = mint(referenceConversation('history-check'));
    const { id } = await promise;
    model.push({ toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'noted' } }] }, {});
    const sent = await mb.box.call('sendPrompt', { agentId: id, prompt: 'and now?', clientNonce: 'n-1' });
    expect(sent.status).toBe(200);
    // The test box runs the local host (AgentHost itself has no idle()).
    await (mb.box.host as LocalAgentHost).idle(id);
    const request = model.requests.at(-1)!;
    const seen = JSON.stringify(request.messages);
    expect(seen).toContain('The pagination test fails; fix it.');
    expect(seen).toContain('npm test');
    expect(seen).toContain('and now?');
  });
});

describe('rollback', () => {
  for (const step of MINT_STEPS) {
    it(`a failure at "${step}" deletes the new agent and rethrows the original error`, async () => {
      const before = await mb.snapshot();
      const boom = new Error(`injected at ${step}`);
      let seen: string | undefined;
      const { promise, warnings } = mint(referenceConversation(), {
        beforeStep: (s, id) => {
          seen = id;
          if (s === step) throw boom;
        },
      });
      await expect(promise).rejects.toBe(boom);
      expect(seen).toBeDefined();
      // The warning first: when the delete failed, it says why.
      expect(warnings).toEqual([
        `the mint failed at step "${step}"; the new agent ${seen} was deleted again`,
      ]);
      expect(await mb.snapshot()).toEqual(before);
    });
  }

  it('a real UNIQUE conflict on a ledger row id rolls back and returns the ledger error', async () => {
    const before = await mb.snapshot();
    const { promise, warnings } = mint(referenceConversation(), {
      beforeStep: (s, id) => {
        if (s !== 'ledger') return;
        // Another writer got there first with the id the seed's first entry uses.
        const db = new Database(path.join(mb.agentsDir, id, 'store.db'));
        db.prepare('INSERT INTO transcript_entries (id, entry) VALUES (?, ?)').run(
          't0u',
          JSON.stringify({ id: 't0u', kind: 'notice', text: 'already here', timestampMs: 1 }),
        );
        db.close();
      },
    });
    await expect(promise).rejects.toThrow(/an entry with id "t0u" already exists \(ids are unique\)/);
    expect(await mb.snapshot()).toEqual(before);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/failed at step "ledger"; the new agent .* was deleted again/);
  });

  it('a store locked by another writer fails the ledger step with SQLITE_BUSY and rolls back', async () => {
    const before = await mb.snapshot();
    let holder: Database.Database | undefined;
    const { promise } = mint(referenceConversation(), {
      busyTimeoutMs: 50,
      beforeStep: (s, id) => {
        if (s !== 'ledger') return;
        holder = new Database(path.join(mb.agentsDir, id, 'store.db'));
        holder.exec('BEGIN IMMEDIATE');
      },
    });
    try {
      await expect(promise).rejects.toThrow(/locked|SQLITE_BUSY/);
    } finally {
      holder?.close();
    }
    expect(await mb.snapshot()).toEqual(before);
  });

  it('a gateway without deleteAgent: the original error is returned and the failed delete is logged', async () => {
    // A real proxy in front of the real gateway that does not know deleteAgent.
    const upstream = new URL(mb.box.gateway.url);
    const proxy = http.createServer((req, res) => {
      if (req.url?.startsWith('/api/deleteAgent') === true) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'unknown method deleteAgent' }));
        return;
      }
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          // The gateway only answers requests addressed to itself (its Host guard).
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    try {
      const before = await mb.snapshot();
      const boom = new Error('injected at jsonl');
      let made: string | undefined;
      const { promise, warnings } = mint(referenceConversation(), {
        env: { ...mb.env, TXCRIPT_GROK_BOT_GATEWAY: `http://127.0.0.1:${port}` },
        beforeStep: (s, id) => {
          made = id;
          if (s === 'jsonl') throw boom;
        },
      });
      await expect(promise).rejects.toBe(boom);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`deleteAgent ${made} failed too`);
      expect(warnings[0]).toContain('HTTP 404');
      // The half-made agent is still there (nothing could delete it); clean it up for the next tests.
      expect((await mb.snapshot()).roster).toEqual([...before.roster, made!].sort());
      expect((await mb.box.call('deleteAgent', { id: made })).status).toBe(200);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

describe('preflight', () => {
  it('a missing agents root fails before createAgent and suggests --out', async () => {
    const before = await mb.snapshot();
    const creates = calls('createAgent');
    const { promise } = mint(referenceConversation(), {
      env: { ...mb.env, TXCRIPT_GROK_BOT_AGENTS: path.join(mb.home, 'no-such-agents') },
    });
    await expect(promise).rejects.toThrow(MintError);
    await expect(promise).rejects.toThrow(/no-such-agents is missing or not writable.*--out DIR/);
    expect(calls('createAgent')).toBe(creates);
    expect(await mb.snapshot()).toEqual(before);
  });

  it('a missing transcripts root (default layout under HOME) fails the same way', async () => {
    const creates = calls('createAgent');
    const env: Record<string, string> = { ...mb.env };
    delete env.TXCRIPT_GROK_BOT_ROOT;
    const { promise } = mint(referenceConversation(), { env });
    await expect(promise).rejects.toThrow(
      new RegExp(
        `${path.join(mb.home, 'agent-data', 'agent-transcripts')} is missing.*TXCRIPT_GROK_BOT_ROOT.*--out`,
      ),
    );
    expect(calls('createAgent')).toBe(creates);
  });

  it('the roots exist but no gateway is configured: a clear error and no createAgent', async () => {
    const creates = calls('createAgent');
    const env: Record<string, string> = { ...mb.env };
    delete env.TXCRIPT_GROK_BOT_GATEWAY;
    const { promise } = mint(referenceConversation(), { env });
    await expect(promise).rejects.toThrow(/no gateway configured/);
    expect(calls('createAgent')).toBe(creates);
  });
});

describe('--metadata reaches createAgent', () => {
  async function profileOf(id: string): Promise<{ name: string; description: string; harness: string }> {
    return JSON.parse(await readFile(path.join(mb.agentsDir, id, 'profile.json'), 'utf8')) as {
      name: string;
      description: string;
      harness: string;
    };
  }

  it('merges left to right: the later name wins, unknown keys are ignored', async () => {
    const metadata = parseMetadata([
      'name=First',
      '{"name":"Relay bot","description":"from Simple","future":true}',
    ]);
    const { id, name, description } = await mint(referenceConversation(), { metadata }).promise;
    expect({ name, description }).toEqual({ name: 'Relay bot', description: 'from Simple' });
    expect(await profileOf(id)).toMatchObject({
      name: 'Relay bot',
      description: 'from Simple',
      harness: 'box',
    });
  });

  it('falls back to the transcript title, then to the default name and a description of where it began', async () => {
    const titled = await mint(referenceConversation(), { metadata: parseMetadata(['description=only this']) })
      .promise;
    expect(await profileOf(titled.id)).toMatchObject({
      name: 'Fix the pagination test',
      description: 'only this',
    });
    const untitled = referenceConversation();
    delete untitled.meta.title;
    const plain = await mint(untitled).promise;
    expect(await profileOf(plain.id)).toMatchObject({
      name: DEFAULT_NAME,
      description: continuedDescription(untitled, undefined),
    });
    const blank = { ...referenceConversation(), meta: { ...untitled.meta, title: '  \n ' } };
    expect((await profileOf((await mint(blank).promise).id)).name).toBe(DEFAULT_NAME);
    const empty = await mint(referenceConversation(), { metadata: parseMetadata(['name=   ']) }).promise;
    expect((await profileOf(empty.id)).name).toBe('Fix the pagination test');
  });

  it('a long title is cut to a sidebar-sized name', async () => {
    const long = referenceConversation();
    long.meta.title = 'word '.repeat(100);
    const { id } = await mint(long).promise;
    const { name } = await profileOf(id);
    expect(name).toHaveLength(MAX_TITLE_NAME);
    expect(name.endsWith('…')).toBe(true);
  });
});

describe('the source', () => {
  it('is not modified by a mint (hash before and after)', async () => {
    // The source is an agent of this box: mint a copy of it and hash its files around the second mint.
    const { id: sourceId, jsonlPath, storePath } = await mint(referenceConversation()).promise;
    // The JSONL byte for byte, and the ledger rows (SQLite may rewrite its file on a checkpoint,
    // and the box records when an agent was last viewed; the conversation is what must not change).
    const hash = async () => {
      const db = new Database(storePath, { readonly: true });
      const rows = db.prepare('SELECT seq, id, entry FROM transcript_entries ORDER BY seq').all();
      db.close();
      return [
        createHash('sha256')
          .update(await readFile(jsonlPath))
          .digest('hex'),
        createHash('sha256').update(JSON.stringify(rows)).digest('hex'),
      ];
    };
    const loaded = await createGrokBotStore(mb.env).load(sourceId);
    const before = await hash();
    const copy = await mint(loaded.transcript).promise;
    expect(copy.id).not.toBe(sourceId);
    expect(await hash()).toEqual(before);
  });
});

/**
 * The session keeps its ledger in memory and catches up with other writers
 * (txcript's mint, a second process) by reading only what changed. These tests
 * pin what it serves to what the files hold, in every way the files can change.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { grokBot, openLedgerForWrite } from '@sendbox/txcript';
import type { LedgerEntry } from '@sendbox/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFixture, ledgerOnDisk, type HostFixture } from '../testing/host-fixture.ts';
import { createAgentHost } from '../host/agent-host.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { readProfile, writeProfile } from '../stores/files/profile.ts';
import { HostError } from './errors.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });
const widget = { prompt: 'Pick one', options: [{ label: 'Red' }, { label: 'Blue' }] };

/** The value a client gets from JSON text (key order aside, which JSON does not give meaning to). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** What a fresh read of store.db gives, in the shape the host serves. */
function onDisk(fixture: HostFixture) {
  const read = ledgerOnDisk(fixture.dataDir, fixture.agentId);
  expect(read.warnings).toEqual([]);
  return read.rows.map((r) => ({ ...r.entry, seq: r.seq }));
}

/** Appends entries as another process would: its own connection, one transaction. */
function externalAppend(fixture: HostFixture, entries: LedgerEntry[], unread?: Record<string, number>): void {
  const ledger = openLedgerForWrite(agentPaths(fixture.dataDir, fixture.agentId).storeDb, {
    busyTimeoutMs: 50,
  });
  try {
    ledger.appendEntries(entries);
    if (unread) ledger.setKv('unreadState', unread);
  } finally {
    ledger.close();
  }
}

/** Focuses another agent, so the fixture's agent is unlocked (what the mint does before writing). */
async function unfocus(fixture: HostFixture): Promise<void> {
  const other = await fixture.host.createAgent({ name: 'Other' });
  await fixture.host.openAgent(other.id);
}

describe('the ledger in memory', () => {
  it('serves exactly what store.db holds, as objects and as JSON text, before and after a restart', async () => {
    fx = await hostFixture([
      { text: 'thinking aloud', toolCalls: [{ name: 'shell', input: { command: 'echo hi' } }] },
      { toolCalls: [send({ type: 'text', content: 'Done: "quoted" \\ and \u2028' })] },
      {},
      { toolCalls: [send({ type: 'widget', widget })] },
    ]);
    await fx.host.uploadFile({ agentId: fx.agentId, fileName: 'a.txt', bytes: Buffer.from('a') });
    await fx.prompt('first');
    await fx.prompt('second');
    const served = await fx.host.openAgent(fx.agentId);
    expect(served.map((e) => e.kind)).toContain('user-attachment');
    expect(asJson(served)).toStrictEqual(asJson(onDisk(fx)));
    expect(await fx.host.openAgentJson(fx.agentId)).toBe(JSON.stringify(served));

    const { dataDir, agentId } = fx;
    await fx.host.close();
    const host = await createAgentHost({ dataDir, provider: null, env: {} });
    try {
      expect(asJson(await host.openAgent(agentId))).toStrictEqual(asJson(served));
      expect((await host.listAgents())[0]).toMatchObject({ awaitingUserResponse: true });
    } finally {
      await host.close();
    }
  });

  it('does not read store.db again when nothing changed: the same entry objects come back', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'hi' })] }, {}]);
    await fx.prompt('hello');
    const first = await fx.host.openAgent(fx.agentId);
    await unfocus(fx);
    const again = await fx.host.openAgent(fx.agentId);
    expect(again).toEqual(first);
    expect(again[0]).toBe(first[0]);
  });

  it('finds an entry by id without a scan, and says 404 for an agent that does not exist', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'hi' })] }, {}]);
    await fx.prompt('hello');
    expect(await fx.host.entryById(fx.agentId, 't0s0')).toMatchObject({
      kind: 'send-message',
      message: { content: 'hi' },
    });
    expect(await fx.host.entryById(fx.agentId, 'nope')).toBeUndefined();
    const error = await fx.host.entryById('no-such-agent', 't0s0').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).status).toBe(404);
  });
});

describe('catching up with another writer', () => {
  it('reads rows appended to an agent with history, and the state they imply', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'one' })] }, {}]);
    await fx.prompt('first');
    await unfocus(fx);
    externalAppend(
      fx,
      [
        {
          id: 't1u',
          kind: 'message',
          role: 'user',
          content: 'from elsewhere',
          clientNonce: 'ext',
          timestampMs: 5,
        },
        { id: 't1s0', kind: 'send-message', message: { type: 'widget', widget }, timestampMs: 6 },
      ],
      { lastActivityAt: 6, lastViewedAt: 0, unreadCount: 1 },
    );
    // Before any openAgent: the event backlog and entryById see the new rows too.
    expect((await fx.host.entriesAfter(fx.agentId, 0)).map((e) => e.id)).toContain('t1s0');
    expect(await fx.host.entryById(fx.agentId, 't1u')).toMatchObject({ content: 'from elsewhere' });
    const opened = await fx.host.openAgent(fx.agentId);
    expect(asJson(opened)).toStrictEqual(asJson(onDisk(fx)));
    const row = (await fx.host.listAgents()).find((r) => r.id === fx!.agentId);
    expect(row).toMatchObject({ awaitingUserResponse: true, lastEntry: { kind: 'send-message' } });
    // The nonce of the external prompt is known: sending it again starts nothing.
    expect(await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'x', clientNonce: 'ext' })).toEqual({
      accepted: true,
      duplicate: true,
    });
    // The external widget is answerable, and the next turn is numbered after the external one.
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'ok' })] }, {});
    await fx.host.answerWidget({ agentId: fx.agentId, messageId: 't1s0', answer: 'Red' });
    await fx.host.idle(fx.agentId);
    expect((await fx.entries()).map((e) => e.id).slice(-3)).toEqual(['t2u', 't2s0', 't2e']);
  });

  it('shows the last entry another writer added in the roster', async () => {
    fx = await hostFixture();
    await unfocus(fx);
    externalAppend(fx, [{ id: 'ext', kind: 'notice', text: 'written elsewhere', timestampMs: 1 }]);
    const row = (await fx.host.listAgents()).find((r) => r.id === fx!.agentId);
    expect(row?.lastEntry).toEqual({ kind: 'notice', text: 'written elsewhere' });
  });

  it('reads the JSONL again when another writer appended to it, and appends after its records', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'one' })] }, {}]);
    await fx.prompt('first');
    await unfocus(fx);
    const { jsonl } = agentPaths(fx.dataDir, fx.agentId);
    const record = grokBot.text.render([
      {
        kind: 'record',
        json: { role: 'user', message: { content: [{ type: 'text', text: 'written by another tool' }] } },
        end: '\n',
      },
    ]);
    await writeFile(jsonl, record, { flag: 'a' });
    await fx.host.openAgent(fx.agentId);
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'two' })] }, {});
    await fx.prompt('second');
    expect(JSON.stringify(fx.model.requests.at(-2)!.messages)).toContain('written by another tool');
    const text = await readFile(jsonl, 'utf8');
    expect(grokBot.text.parse(text, jsonl).warnings).toEqual([]);
    expect(text.indexOf('written by another tool')).toBeLessThan(text.indexOf('[t1u]'));
  });

  it('reads the whole ledger again when rows landed before entries the host wrote after them', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'one' })] }, {}]);
    await fx.prompt('first');
    await unfocus(fx);
    externalAppend(fx, [{ id: 'ext-notice', kind: 'notice', text: 'from elsewhere', timestampMs: 1 }]);
    // A prompt does not catch up first, so the host's rows land after the external one.
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'two' })] }, {});
    await fx.prompt('second');
    const served = await fx.host.entriesAfter(fx.agentId, 0);
    expect(served.map((e) => e.id)).toContain('ext-notice');
    expect(asJson(served)).toStrictEqual(asJson(onDisk(fx)));
  });

  it('opens the new file when store.db was replaced, and writes into it', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'one' })] }, {}]);
    await fx.prompt('first');
    await unfocus(fx);
    // A whole new ledger, built elsewhere and closed (so it holds every row without a WAL), moved in.
    const { storeDb } = agentPaths(fx.dataDir, fx.agentId);
    const built = path.join(fx.dataDir, 'replacement', 'store.db');
    const replacement = openLedgerForWrite(built);
    replacement.appendEntries([{ id: 'seeded', kind: 'notice', text: 'replaced', timestampMs: 1 }]);
    replacement.close();
    await rm(`${storeDb}-wal`, { force: true });
    await rm(`${storeDb}-shm`, { force: true });
    await rename(built, storeDb);
    expect((await fx.host.openAgent(fx.agentId)).map((e) => e.id)).toEqual(['seeded']);
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'two' })] }, {});
    await fx.prompt('second');
    expect(onDisk(fx).map((e) => e.id)).toEqual(['seeded', 't0u', 't0s0', 't0e']);
  });

  it('reads the profile again when another writer changed it', async () => {
    fx = await hostFixture();
    await unfocus(fx);
    const { profile } = agentPaths(fx.dataDir, fx.agentId);
    await writeProfile(profile, { ...(await readProfile(profile)), name: 'Renamed elsewhere' });
    await fx.host.openAgent(fx.agentId);
    const row = (await fx.host.listAgents()).find((r) => r.id === fx!.agentId);
    expect(row?.name).toBe('Renamed elsewhere');
  });
});

/**
 * Conformance: every entry kind (grok-bot-format.md §7) and every stored send type (§6) survives
 * the ledger reader — from a real store.db file and from a gateway response — with every field it
 * had, and every send becomes a `send_message` call whose input is the stored form.
 * The entries are written here from the public field lists; the values are made up.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedgerFile } from './ledger-db.ts';
import { parseLedgerEntries } from './ledger-entry.ts';
import { ledgerToCommon } from './ledger-to-common.ts';

const T = 1_790_000_000_000;

/** One stored form per §6 type: the five modelled ones with every optional field, then the others. */
const STORED: Record<string, Record<string, unknown>> = {
  text: {
    type: 'text',
    content: 'Here is the plot.',
    images: [{ url: 'file:///home/box/plot.png', alt: 'plot', width: 640, height: 480 }],
    reply_to: 't2u',
    channel: 'dm',
  },
  attachment: {
    type: 'attachment',
    url: 'file:///home/box/report.pdf',
    file_name: 'report.pdf',
    alt: 'the report',
    width: 10,
    height: 20,
  },
  widget: {
    type: 'widget',
    widget: {
      prompt: 'Which colour?',
      helpText: 'pick one',
      options: [
        { label: 'Red', value: 'r', description: 'warm', style: 'primary' },
        { label: 'Blue', value: 'b', style: 'danger' },
        { label: 'Green' },
      ],
      allowCustom: true,
      dismissOnMoveOn: true,
      multiSelect: false,
    },
  },
  'cursor-agent': { type: 'cursor-agent', bcId: 'bc-42', title: 'Refactor job' },
  'secret-request': {
    type: 'secret-request',
    secretRequest: {
      label: 'Mail token',
      description: 'for sending',
      target: { kind: 'channel-credential', platform: 'mail', field: 'token' },
    },
  },
  connector: { type: 'connector', connector: 'tracker', serverId: 'srv-1', variant: 'connect' },
  'auto-review-approval': {
    type: 'auto-review-approval',
    approval: { requestId: 'rq-1', surface: 'shell', summary: 'Run make', status: 'pending' },
  },
  'local-tool-permission': { type: 'local-tool-permission', tool: 'shell', scope: 'once' },
  'credential-request': { type: 'credential-request', label: 'Login', origin: 'https://example.test' },
  'user-form': { type: 'user-form', form: { fields: [{ name: 'city', label: 'City' }] } },
  'permission-request': { type: 'permission-request', permission: 'camera' },
  'cookie-origin-approval': { type: 'cookie-origin-approval', origin: 'https://shop.example.test' },
  'virtual-card-approval': { type: 'virtual-card-approval', amountCents: 1299, merchant: 'Books' },
  'email-draft': { type: 'email-draft', draft: { to: ['a@example.test'], subject: 'Hi', body: 'Hello' } },
  'slack-draft': { type: 'slack-draft', draft: { channel: '#team', text: 'Standup in 5' } },
  connectors: { type: 'connectors', connectors: ['tracker', 'mail'] },
  'listener-connect': { type: 'listener-connect', listener: 'webhook' },
  'scm-connect': { type: 'scm-connect', provider: 'git-host' },
  'onepassword-connect': { type: 'onepassword-connect', vault: 'Work' },
  'team-access': { type: 'team-access', team: 'eng', role: 'viewer' },
  'slack-connect': { type: 'slack-connect', workspace: 'acme' },
  'bot-template-share': { type: 'bot-template-share', templateId: 'tpl-7', name: 'Helper' },
};

/** One entry per §7 kind, each with every field the section lists. */
const KINDS: Record<string, unknown>[] = [
  {
    id: 't0u',
    kind: 'message',
    timestampMs: T,
    seq: 1,
    role: 'user',
    content: 'Plot the numbers',
    isStreaming: false,
    richText: 'Plot the numbers',
    author: { id: 'u-1', name: 'Ana' },
    clientNonce: 'n-1',
    sentWhileOfflineAtMs: T - 5,
  },
  {
    id: 't0a0',
    kind: 'message',
    timestampMs: T + 1,
    role: 'assistant',
    content: 'On it',
    isStreaming: false,
    fromAgent: 'agent-2',
    hiddenOutboundAgentPeerMessage: false,
  },
  {
    id: 't1u',
    kind: 'message',
    timestampMs: T + 2,
    role: 'user',
    content: 'Red',
    respondedValue: 'r',
    widgetSkipped: false,
    replyTo: 't0s2',
  },
  {
    id: 't1r',
    kind: 'message',
    timestampMs: T + 3,
    role: 'user',
    content: '',
    reactions: [{ emoji: '👍', by: 'u-1' }],
    replyTo: 't0a0',
  },
  { id: 't0s9', kind: 'send-message', timestampMs: T + 4, message: STORED.text, streaming: true },
  {
    id: 't1ua0',
    kind: 'user-attachment',
    timestampMs: T + 5,
    file_name: 'data.csv',
    file_path: '/home/box/agent-data/agents/a/attachments/ab.csv',
    batchId: 'b-1',
    clientNonce: 'n-2',
    width: 1,
    height: 2,
    byteSize: 300,
  },
  { id: 't1c0', kind: 'tool-call', timestampMs: T + 6, name: 'shell', status: 'success', summary: 'ran ls' },
  { id: 'ev1', kind: 'event', timestampMs: T + 7, event: { type: 'name-changed', from: 'Old', to: 'New' } },
  {
    id: 'ev2',
    kind: 'event',
    timestampMs: T + 8,
    event: { type: 'automation-changed', action: 'updated', automationId: 'au-1' },
  },
  {
    id: 'vc1',
    kind: 'voice-call',
    timestampMs: T + 9,
    call: { callId: 'c-1', durationMs: 15000, ending: 'hung-up', turnCount: 2 },
  },
  { id: 'tb', kind: 'notice', timestampMs: T + 10, text: 'Agent started' },
  { id: 't1e', kind: 'turn-ended', timestampMs: T + 11 },
];

const SENDS: Record<string, unknown>[] = Object.values(STORED).map((message, i) => ({
  id: `t5s${i}`,
  kind: 'send-message',
  timestampMs: T + 100 + i,
  message,
}));
const ALL = [...KINDS, ...SENDS];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ledger-conf-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function storeDb(entries: readonly Record<string, unknown>[]): string {
  const path = join(dir, 'store.db');
  const db = new Database(path);
  db.exec(
    'CREATE TABLE transcript_entries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, entry TEXT NOT NULL) STRICT',
  );
  const insert = db.prepare('INSERT INTO transcript_entries (id, entry) VALUES (?, ?)');
  for (const e of entries) insert.run(e.id, JSON.stringify(e));
  db.close();
  return path;
}

describe('ledger reader conformance (grok-bot-format.md §6–§7)', () => {
  it('reads every kind and every stored type from store.db with every field it had', () => {
    const read = readLedgerFile(storeDb(ALL));
    expect(read.warnings).toEqual([]);
    expect(read.rows.map((r) => r.entry)).toEqual(ALL);
  });

  it('reads the same from a gateway response', () => {
    const { entries, warnings } = parseLedgerEntries(ALL, 'gw');
    expect(warnings).toEqual([]);
    expect(entries).toEqual(ALL);
  });

  it('makes every send of every type a send_message call whose input is the stored form', () => {
    const { entries } = parseLedgerEntries(SENDS, 'gw');
    const { transcript, warnings } = ledgerToCommon(entries, { sessionId: 'a', source: 'gw' });
    expect(warnings).toEqual([]);
    const calls = transcript.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_use');
    expect(calls).toEqual(
      SENDS.map((s) => ({
        type: 'tool_use',
        id: s.id,
        tool: { name: 'Raw', tool_name: 'send_message', input: s.message },
      })),
    );
    expect(transcript.messages.map((m) => m.timestamp)).toEqual(
      SENDS.flatMap((s) => [
        new Date(s.timestampMs as number).toISOString(),
        new Date(s.timestampMs as number).toISOString(),
      ]),
    );
  });

  it('places each conversation kind, and names what it cannot place', () => {
    const { entries } = parseLedgerEntries(
      [...KINDS, { id: 'x1', kind: 'hologram', timestampMs: T + 50 }],
      'gw',
    );
    const { transcript, warnings } = ledgerToCommon(entries, { sessionId: 'a', source: 'gw' });
    expect(transcript.messages.map((m) => [m.role, m.content.map((b) => b.type).join()])).toEqual([
      ['user', 'text'],
      ['assistant', 'text'],
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
      ['user', 'artifact'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      '1 reaction-only "message" entry (t1r) left out of Common, which has no place for them; the ledger keeps them',
      '1 "hologram" entry (x1) left out of Common, which has no place for them; the ledger keeps them',
      'fields left out of Common, which has no place for them (the ledger keeps them): ' +
        'message.author, message.fromAgent, message.hiddenOutboundAgentPeerMessage, message.reactions, ' +
        'message.replyTo, message.respondedValue, message.sentWhileOfflineAtMs, message.widgetSkipped',
    ]);
  });
});

/**
 * What the box writes, read back with txcript's grok_bot harness: the JSONL
 * through its text codec (lossless) and codec (Common), the ledger through its
 * ledger module, and the agent through its store (discovery + load).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { grokBot, ledgerToCommon, readLedgerFile } from '@sendbox/txcript';
import type { Block, Message } from '@sendbox/txcript';
import { afterEach, describe, expect, it } from 'vitest';
import { agentPaths } from './layout.ts';
import { hostFixture, type HostFixture } from '../../testing/host-fixture.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });

async function conversation(): Promise<HostFixture> {
  const f = await hostFixture();
  await writeFile(path.join(f.sandbox, 'chart.png'), 'png-bytes');
  f.model.push(
    {
      text: 'Plan: look around, then report.',
      toolCalls: [{ name: 'shell', input: { command: 'echo hi' } }],
    },
    {
      toolCalls: [
        { name: 'shell', input: { command: 'exit 2' } },
        { name: 'read', input: { path: 'nope.txt' } },
      ],
    },
    {
      toolCalls: [
        send({
          type: 'text',
          content: 'Here is the chart.',
          images: [{ url: `file://${f.sandbox}/chart.png`, alt: 'chart' }],
        }),
        send({ type: 'attachment', url: `file://${f.sandbox}/chart.png` }),
        send({
          type: 'widget',
          widget: { prompt: 'Ship it?', options: [{ label: 'Yes' }, { label: 'No' }] },
        }),
      ],
    },
    { toolCalls: [send({ type: 'text', content: 'Shipping.' })] },
    {},
  );
  await f.prompt('make me a chart');
  await f.host.answerWidget({ agentId: f.agentId, messageId: 't0s2', answer: 'Yes' });
  await f.host.idle(f.agentId);
  return f;
}

function blocks(messages: Message[], type: Block['type']): Block[] {
  return messages.flatMap((m) => m.content.filter((b) => b.type === type));
}

describe('read back with the grok_bot harness', () => {
  it('the JSONL round-trips through the text codec byte for byte and parses without warnings', async () => {
    fx = await conversation();
    const text = await fx.jsonlText();
    const parsed = grokBot.text.parse(text, 'x.jsonl');
    expect(parsed.warnings).toEqual([]);
    expect(grokBot.text.render(parsed.records)).toBe(text);
  });

  it('the codec reads the same conversation: user turns, private text, every call paired with its result', async () => {
    fx = await conversation();
    const parsed = grokBot.text.parse(await fx.jsonlText(), 'x.jsonl');
    const transcript = grokBot.codec.toCommon(parsed.records, { sessionId: fx.agentId });
    const users = transcript.messages
      .filter((m) => m.role === 'user' && m.content.some((b) => b.type === 'text'))
      .map((m) => (m.content[0] as { text: string }).text);
    expect(users[0]).toBe('make me a chart');
    expect(users[1]).toBe('[Answering your question t0s2: "Ship it?"]\nYes');

    const uses = blocks(transcript.messages, 'tool_use') as Extract<Block, { type: 'tool_use' }>[];
    const results = blocks(transcript.messages, 'tool_result') as Extract<Block, { type: 'tool_result' }>[];
    expect(uses.map((u) => (u.tool.name === 'Raw' ? u.tool.tool_name : u.tool.name))).toEqual([
      'Bash',
      'Bash',
      'Read',
      'send_message',
      'send_message',
      'send_message',
      'send_message',
    ]);
    expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
    expect(results.map((r) => r.is_error === true)).toEqual([false, true, true, false, false, false, false]);

    // send_message inputs are the encoder shapes (C9); images ride as markdown lines.
    const sendInputs = uses.slice(3).map((u) => (u.tool.name === 'Raw' ? u.tool.input : null));
    expect(sendInputs[0]).toMatchObject({
      text: { content: expect.stringMatching(/^Here is the chart\.\n\n!\[chart\]\(file:\/\//) as unknown },
    });
    expect(sendInputs[1]).toMatchObject({ attachment: { url: `file://${fx.sandbox}/chart.png` } });
    expect(sendInputs[2]).toMatchObject({ text: { content: 'Ship it? — Yes / No' } });
    const thinking = transcript.messages.flatMap((m) =>
      m.content.filter((b) => b.type === 'text' && m.role === 'assistant'),
    );
    expect(thinking).toEqual([{ type: 'text', text: 'Plan: look around, then report.' }]);
  });

  it('the ledger read by the ledger module equals what the host serves, and converts to Common', async () => {
    fx = await conversation();
    const onDisk = readLedgerFile(agentPaths(fx.dataDir, fx.agentId).storeDb);
    expect(onDisk.warnings).toEqual([]);
    const served = await fx.entries();
    expect(onDisk.rows.map((r) => ({ ...r.entry, seq: r.seq }))).toEqual(served);
    expect(served.map((e) => e.id)).toEqual([
      't0u',
      't0a0',
      't0c0',
      't0c1',
      't0c2',
      't0s0',
      't0s1',
      't0s2',
      't0e',
      't1u',
      't1s0',
      't1e',
    ]);
    const common = ledgerToCommon(
      onDisk.rows.map((r) => r.entry),
      { sessionId: fx.agentId },
    );
    // An answer's link and value are the ledger's alone: Common says so once.
    expect(common.warnings.map((w) => w.message)).toEqual([
      'fields left out of Common, which has no place for them (the ledger keeps them): message.replyTo, message.respondedValue, message.widgetSkipped',
    ]);
    const sendCalls = blocks(common.transcript.messages, 'tool_use');
    expect(sendCalls.length).toBeGreaterThanOrEqual(4);
  });

  it("txcript's store discovers the agent by its profile and loads the JSONL", async () => {
    fx = await conversation();
    const store = grokBot.store!({
      HOME: fx.dataDir,
      TXCRIPT_GROK_BOT_ROOT: path.join(fx.dataDir, 'agent-transcripts'),
      TXCRIPT_GROK_BOT_AGENTS: path.join(fx.dataDir, 'agents'),
    });
    const found = await store.discover();
    expect(found.sessions.map((s) => [s.id, s.title])).toEqual([[fx.agentId, 'Test agent']]);
    const loaded = await store.load(fx.agentId);
    expect(loaded.source).toBe(agentPaths(fx.dataDir, fx.agentId).jsonl);
    const direct = grokBot.codec.toCommon(grokBot.text.parse(await readFile(loaded.source, 'utf8')).records, {
      sessionId: fx.agentId,
    });
    // Records carry no timestamps (grok-bot-format.md §2): the store dates them by the file, the codec by the epoch.
    const shape = (messages: Message[]) => messages.map((m) => ({ role: m.role, content: m.content }));
    expect(shape(loaded.transcript.messages)).toEqual(shape(direct.messages));
    // Real clocks: a user record takes its ledger entry's time (same address), a send its result's.
    const served = await fx.entries();
    const at = (id: string) => new Date(served.find((e) => e.id === id)!.timestampMs).toISOString();
    const users = loaded.transcript.messages.flatMap((m, i) =>
      m.role === 'user' && m.content.some((b) => b.type === 'text') ? [i] : [],
    );
    expect(users.map((i) => loaded.transcript.messages[i]!.timestamp)).toEqual([at('t0u'), at('t1u')]);
    for (const i of users) expect(loaded.untimed?.has(i), `message ${i}`).toBe(false);
    const firstSend = loaded.transcript.messages.findIndex((m) =>
      m.content.some(
        (b) => b.type === 'tool_use' && b.tool.name === 'Raw' && b.tool.tool_name === 'send_message',
      ),
    );
    expect(loaded.untimed?.has(firstSend)).toBe(false);
  });
});

/**
 * Codex as the CLI writes it (issue 13): encrypted-only reasoning, event-only
 * rollouts, and the per-turn task events and turn context of the files we
 * write. Fixtures are written here in the shapes of Codex's rollout writer.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject, Transcript } from '../../model/common.ts';
import { simple } from '../simple/index.ts';
import { codexCodec, codexStore, codexText } from './index.ts';

const ID = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
const line = (type: string, payload: object, ts = '2026-04-01T09:00:00.000Z'): string =>
  JSON.stringify({ timestamp: ts, type, payload });
const meta = line('session_meta', {
  id: ID,
  timestamp: '2026-04-01T09:00:00.000Z',
  cwd: '/w',
  cli_version: '0.50.0',
});
/** A payload value as text, for compact expectations. */
const s = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const read = (text: string): Transcript =>
  codexCodec.toCommon(codexText.parse(text).records, { sessionId: ID });
const items = (t: Transcript): JsonObject[] =>
  codexCodec.fromCommon(t).flatMap((l) => (l.kind === 'record' ? [l.json as JsonObject] : []));

describe('codex encrypted-only reasoning', () => {
  const text = [
    meta,
    line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }),
    line('response_item', {
      type: 'reasoning',
      summary: [],
      content: null,
      encrypted_content: 'gAAAA-secret-1',
    }),
    line('response_item', {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'done' }],
    }),
    line('response_item', { type: 'reasoning', summary: [], encrypted_content: 'gAAAA-secret-2' }),
    '',
  ].join('\n');

  it('gives no thinking block, and nothing in a Simple document', () => {
    const t = read(text);
    expect(t.messages.map((m) => m.content.map((b) => b.type))).toEqual([['text'], ['text']]);
    const doc = simple.text.render(simple.codec.fromCommon(t));
    expect(doc).not.toContain('gAAAA');
  });

  it('survives a Codex -> Codex trip, before the message it preceded and at the end', () => {
    const out = items(read(text)).filter((j) => j.type === 'response_item');
    const kinds = out.map((j) => {
      const p = j.payload as JsonObject;
      return p.type === 'reasoning' ? `reasoning:${s(p.encrypted_content)}` : `${s(p.type)}:${s(p.role)}`;
    });
    expect(kinds).toEqual([
      'message:user',
      'reasoning:gAAAA-secret-1',
      'message:assistant',
      'reasoning:gAAAA-secret-2',
    ]);
    // A range that keeps the assistant message keeps its reasoning (object spreads keep it too).
    const t = read(text);
    const sliced = { meta: t.meta, messages: t.messages.slice(1).map((m) => ({ ...m })) };
    expect(JSON.stringify(items(sliced))).toContain('gAAAA-secret-1');
  });
});

describe('codex event-only rollouts', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-codex-fidelity-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('builds the conversation from user_message, agent_reasoning and agent_message events, and lists it with its count', async () => {
    const text = [
      meta,
      line('turn_context', { turn_id: 't1', cwd: '/w', model: 'gpt-5-codex' }),
      line('event_msg', { type: 'user_message', message: 'Explain the build', images: [] }),
      line('event_msg', { type: 'agent_reasoning', text: 'Looking at the Makefile' }),
      line('event_msg', { type: 'agent_message', message: 'It uses make.' }),
      line('event_msg', {
        type: 'token_count',
        info: { last_token_usage: { input_tokens: 10, cached_input_tokens: 4, output_tokens: 3 } },
      }),
      '',
    ].join('\n');
    const t = read(text);
    expect(t.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', [{ type: 'text', text: 'Explain the build' }]],
      ['assistant', [{ type: 'thinking', text: 'Looking at the Makefile' }]],
      ['assistant', [{ type: 'text', text: 'It uses make.' }]],
    ]);
    expect(t.messages[2]).toMatchObject({
      model: 'gpt-5-codex',
      usage: { input_tokens: 6, cache_read_input_tokens: 4, output_tokens: 3 },
    });
    expect(t.meta.title).toBe('Explain the build');
    const day = path.join(dir, '2026', '04', '01');
    await fs.mkdir(day, { recursive: true });
    await fs.writeFile(path.join(day, `rollout-2026-04-01T09-00-00-${ID}.jsonl`), text);
    const { sessions } = await codexStore({
      HOME: dir,
      TXCRIPT_CODEX_ROOT: dir,
      TXCRIPT_NO_CACHE: '1',
    }).discover();
    expect(sessions).toMatchObject([{ id: ID, messageCount: 3, title: 'Explain the build' }]);
  });
});

describe('codex sessions we write', () => {
  it('carry task_started, a turn_context with turn_id and model, token_count and task_complete in every turn', () => {
    const ts = '2026-04-01T09:00:00.000Z';
    const t: Transcript = {
      meta: { id: ID, timestamp: ts, cwd: '/w' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'one' }], timestamp: ts },
        {
          role: 'assistant',
          model: 'gpt-5',
          content: [{ type: 'tool_use', id: 'c1', tool: { name: 'Bash', command: 'ls' } }],
          timestamp: ts,
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'a' }], timestamp: ts },
        {
          role: 'assistant',
          model: 'gpt-5',
          usage: { input_tokens: 5, output_tokens: 2 },
          content: [{ type: 'text', text: 'first' }],
          timestamp: ts,
        },
        { role: 'user', content: [{ type: 'text', text: 'two' }], timestamp: ts },
        {
          role: 'assistant',
          model: 'o3',
          usage: { input_tokens: 7, output_tokens: 1 },
          content: [{ type: 'text', text: 'second' }],
          timestamp: ts,
        },
      ],
    };
    const out = items(t);
    const events = out.flatMap((j) => {
      const p = j.payload as JsonObject;
      if (j.type === 'turn_context') return [`turn_context:${s(p.turn_id)}:${s(p.model)}`];
      if (
        j.type === 'event_msg' &&
        ['task_started', 'task_complete', 'token_count'].includes(p.type as string)
      )
        return [`${s(p.type)}${p.turn_id !== undefined ? `:${s(p.turn_id)}` : ''}`];
      return [];
    });
    const [t1, t2] = out
      .filter((j) => j.type === 'event_msg' && (j.payload as JsonObject).type === 'task_started')
      .map((j) => s((j.payload as JsonObject).turn_id));
    expect(events).toEqual([
      `task_started:${t1}`,
      `turn_context:${t1}:gpt-5`,
      'token_count',
      `task_complete:${t1}`,
      `task_started:${t2}`,
      `turn_context:${t2}:o3`,
      'token_count',
      `task_complete:${t2}`,
    ]);
    const complete = out.find((j) => (j.payload as JsonObject).type === 'task_complete')!
      .payload as JsonObject;
    expect(complete.last_agent_message).toBe('first');
    // And they come back: model and usage per assistant message.
    const back = read(codexText.render(codexCodec.fromCommon(t)));
    expect(
      back.messages.filter((m) => m.role === 'assistant').map((m) => [m.model, m.usage?.output_tokens]),
    ).toEqual([
      ['gpt-5', undefined],
      ['gpt-5', 2],
      ['o3', 1],
    ]);
  });
});

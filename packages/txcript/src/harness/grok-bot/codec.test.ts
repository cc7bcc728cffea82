import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Block, JsonObject, JsonValue, Message, Tool, Transcript } from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import {
  GROK_BOT_ID_NAMESPACE,
  UNIX_EPOCH,
  grokBotFromCommon,
  grokBotToCommon,
  isErrorResult,
  normalizeTimestamp,
} from './codec.ts';
import { stripAddressTag } from './address-tag.ts';
import { parseGrokBotJsonl, renderGrokBotJsonl } from './text.ts';
import type { GrokBotRecords } from './text.ts';

const SESSION = 'sess-1';
const rec = (o: JsonObject): string => JSON.stringify(o);
const user = (...content: JsonValue[]): string => rec({ role: 'user', message: { content } });
const assistant = (...content: JsonValue[]): string => rec({ role: 'assistant', message: { content } });
const tool = (...content: JsonValue[]): string => rec({ role: 'tool', message: { content } });
const text = (t: string): JsonObject => ({ type: 'text', text: t });
const use = (name: string, input: JsonValue, extra: JsonObject = {}): JsonObject => ({
  type: 'tool_use',
  name,
  input,
  ...extra,
});
const result = (name: string, r: JsonValue, extra: JsonObject = {}): JsonObject => ({
  type: 'tool_result',
  name,
  result: r,
  ...extra,
});

function common(...lines: string[]): Transcript {
  return grokBotToCommon(parseGrokBotJsonl(lines.join('\n') + '\n').records, { sessionId: SESSION });
}
function blocks(t: Transcript): Block[] {
  return t.messages.flatMap((m) => m.content);
}
function nativeJson(records: GrokBotRecords): JsonObject[] {
  return records.flatMap((r) => (r.kind === 'record' ? [r.json] : []));
}

describe('grok_bot codec: records to Common', () => {
  it('maps user, assistant and tool roles; leaves out unknown roles and empty records', () => {
    const t = common(
      user(text('hi')),
      rec({ role: 'supervisor', note: 'watching' }),
      assistant(text('hello')),
      assistant(),
      user({ type: 'mystery', x: 1 }),
      assistant(use('send_message', { text: { content: 'hello' } })),
      tool(result('send_message', { success: { messageId: 't0s0' } })),
    );
    expect(t.messages.map((m) => [m.role, m.content[0]!.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
    ]);
  });

  it('keeps assistant text and the send_message call both, as text and Raw (C1)', () => {
    const t = common(assistant(text('Hi.')), assistant(use('send_message', { text: { content: 'Hi.' } })));
    expect(blocks(t)[0]).toEqual({ type: 'text', text: 'Hi.' });
    expect(blocks(t)[1]).toMatchObject({
      type: 'tool_use',
      tool: { name: 'Raw', tool_name: 'send_message', input: { text: { content: 'Hi.' } } },
    });
  });

  it('strips a leading address tag and one separator from user text only (C6)', () => {
    expect(stripAddressTag('[t0u]\nHello')).toBe('Hello');
    expect(stripAddressTag('[t5u] later')).toBe('later');
    expect(stripAddressTag('[t1]\r\nx')).toBe('x');
    expect(stripAddressTag('[t12a]\n\nx')).toBe('\nx');
    expect(stripAddressTag('[tzz9u]x')).toBe('x');
    expect(stripAddressTag('[T5u]\nx')).toBe('[T5u]\nx');
    expect(stripAddressTag('say [t5u]\nx')).toBe('say [t5u]\nx');
    const t = common(user(text('[t3u]\nquestion')), assistant(text('[t3u]\nanswer')));
    expect(blocks(t)).toEqual([text('question'), text('[t3u]\nanswer')]);
    // Not regenerated on write.
    expect(nativeJson(grokBotFromCommon(t))[0]).toMatchObject({ message: { content: [text('question')] } });
  });

  it('reads a plain-string message content as one text block', () => {
    expect(blocks(common(rec({ role: 'assistant', message: { content: 'plain' } })))).toEqual([
      text('plain'),
    ]);
  });

  it('drops a user record whose only text is an address tag', () => {
    expect(common(user(text('[t4u]\n'))).messages).toEqual([]);
  });

  it('gives no block for text that is only whitespace after the tag, as txcript does', () => {
    expect(common(user(text('[t4u]\n  \n\t'))).messages).toEqual([]);
    expect(common(assistant(text(' \n'))).messages).toEqual([]);
    expect(blocks(common(user(text('[t1u]\n \n'), text('kept'))))).toEqual([text('kept')]);
  });

  it('types shell as Bash (timeout -> timeout_ms) and read as Read (path -> file_path), and back', () => {
    const t = common(
      assistant(use('shell', { command: 'ls', timeout: 5000, toolCallId: 'c1' })),
      assistant(use('read', { path: '/a', offset: 2, limit: 3, toolCallId: 'c2' })),
    );
    expect(blocks(t)).toEqual([
      { type: 'tool_use', id: 'c1', tool: { name: 'Bash', command: 'ls', timeout_ms: 5000 } },
      { type: 'tool_use', id: 'c2', tool: { name: 'Read', file_path: '/a', offset: 2, limit: 3 } },
    ]);
    expect(nativeJson(grokBotFromCommon(t)).map((r) => (r.message as JsonObject).content)).toEqual([
      [use('shell', { command: 'ls', timeout: 5000, toolCallId: 'c1' })],
      [use('read', { path: '/a', offset: 2, limit: 3, toolCallId: 'c2' })],
    ]);
  });

  it('keeps a shell call that is not exactly Bash as Raw "shell" with its original input', () => {
    const input = { command: 'ls', workingDirectory: '/w', timeout: 5, isBackground: false };
    const t = common(assistant(use('shell', { ...input, toolCallId: 'c1' })));
    expect(blocks(t)[0]).toEqual({
      type: 'tool_use',
      id: 'c1',
      tool: { name: 'Raw', tool_name: 'shell', input },
    });
    const clash = common(assistant(use('shell', { command: 'ls', timeout: 1, timeout_ms: 2 })));
    expect(blocks(clash)[0]).toMatchObject({ tool: { name: 'Raw', tool_name: 'shell' } });
    // A native `timeout_ms` key would come back as `timeout`: not exact, so Raw.
    const renamed = common(assistant(use('shell', { command: 'ls', timeout_ms: 2 })));
    expect(blocks(renamed)[0]).toMatchObject({ tool: { name: 'Raw', tool_name: 'shell' } });
  });

  it('reads toolCallId from the input first, then from the block (C2)', () => {
    const t = common(
      assistant(use('web_search', { searchTerm: 'x', toolCallId: 'in-input' }, { toolCallId: 'on-block' })),
      assistant(use('web_search', { searchTerm: 'y' }, { toolCallId: 'b1' })),
      assistant(use('web_search', { searchTerm: 'y' }, { tool_call_id: 'b2' })),
      assistant(use('web_search', { searchTerm: 'y' }, { tool_use_id: 'b3' })),
    );
    expect(blocks(t).map((b) => (b.type === 'tool_use' ? [b.id, b.tool] : []))).toEqual([
      ['in-input', { name: 'Raw', tool_name: 'web_search', input: { searchTerm: 'x' } }],
      ['b1', { name: 'Raw', tool_name: 'web_search', input: { searchTerm: 'y' } }],
      ['b2', { name: 'Raw', tool_name: 'web_search', input: { searchTerm: 'y' } }],
      ['b3', { name: 'Raw', tool_name: 'web_search', input: { searchTerm: 'y' } }],
    ]);
  });

  it('gives a call without id a UUIDv5 of {session}:{recordIndex}:{blockIndex}:{name}, counting object lines only', () => {
    const lines = [user(text('go')), '', '{malformed', assistant(text('ok'), use('web_fetch', { url: 'u' }))];
    const t = common(...lines);
    // recordIndex 1: the blank and malformed lines do not count; blockIndex 1.
    expect(blocks(t)[2]).toMatchObject({ id: uuidV5(GROK_BOT_ID_NAMESPACE, `${SESSION}:1:1:web_fetch`) });
    expect(uuidV5(GROK_BOT_ID_NAMESPACE, `${SESSION}:1:1:web_fetch`)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('pairs results by explicit id, then FIFO by name; an orphan never takes a call of another name (C3)', () => {
    const t = common(
      assistant(
        use('web_search', { q: 1 }),
        use('web_search', { q: 2 }),
        use('shell', { command: 'a', toolCallId: 's1' }),
      ),
      tool(result('web_search', { success: 2 }, { toolCallId: 'nope' })),
      tool(result('web_search', { success: 1 })),
      tool(result('web_fetch', { success: 'orphan' })),
      tool(result('shell', { success: { stdout: '' } }, { tool_use_id: 's1' })),
      tool(result('web_search', { success: 3 })),
      tool(result('web_search', { success: 4 })),
    );
    const calls = blocks(t).filter((b) => b.type === 'tool_use');
    const results = blocks(t).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
    expect(results[0]).toBe('nope');
    expect(results[1]).toBe(calls[0]!.id);
    expect(results[2]).toBe(uuidV5(GROK_BOT_ID_NAMESPACE, `${SESSION}:3:0:orphan:web_fetch`));
    expect(results[3]).toBe('s1');
    expect(results[4]).toBe(calls[1]!.id);
    expect(results[5]).toBe(uuidV5(GROK_BOT_ID_NAMESPACE, `${SESSION}:6:0:orphan:web_search`));
  });

  it('pairs an explicit-id result with its call so FIFO does not hand that call to another result', () => {
    const t = common(
      assistant(use('read', { path: '/a', toolCallId: 'r1' }), use('read', { path: '/b', toolCallId: 'r2' })),
      tool(result('read', { success: { content: 'a' } }, { toolCallId: 'r1' })),
      tool(result('read', { success: { content: 'b' } })),
    );
    expect(blocks(t).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []))).toEqual(['r1', 'r2']);
  });

  it('marks errors for failure, rejected, error, spawnError and success.isError (C4)', () => {
    expect(isErrorResult({ failure: {} })).toBe(true);
    expect(isErrorResult({ rejected: { reason: 'no' } })).toBe(true);
    expect(isErrorResult({ error: { error: 'x' } })).toBe(true);
    expect(isErrorResult({ spawnError: { error: 'x' } })).toBe(true);
    expect(isErrorResult({ success: { isError: true, content: [] } })).toBe(true);
    expect(isErrorResult({ success: { isError: false } })).toBe(false);
    expect(isErrorResult({ success: {}, isBackground: false })).toBe(false);
    expect(isErrorResult('failure')).toBe(false);
    const t = common(
      assistant(use('send_message', { text: { content: 'x' } })),
      tool(result('send_message', { error: { error: 'blocked' } })),
    );
    expect(blocks(t)[1]).toMatchObject({ is_error: true, content: { error: { error: 'blocked' } } });
  });

  it('keeps the whole result JSON as the content and writes it back exactly', () => {
    const r = { success: { stdout: 'a', exitCode: 0 }, isBackground: false };
    const lines = [assistant(use('shell', { command: 'ls', toolCallId: 'c' })), tool(result('shell', r))];
    const t = common(...lines);
    expect(blocks(t)[1]).toEqual({ type: 'tool_result', tool_use_id: 'c', content: r });
    expect(renderGrokBotJsonl(grokBotFromCommon(t))).toBe(lines.join('\n') + '\n');
  });

  it('wraps a non-envelope result in success or failure on write', () => {
    const t: Transcript = {
      meta: { id: 's', timestamp: UNIX_EPOCH },
      messages: [
        {
          role: 'assistant',
          timestamp: UNIX_EPOCH,
          content: [{ type: 'tool_use', id: 'a', tool: { name: 'Bash', command: 'x' } }],
        },
        {
          role: 'user',
          timestamp: UNIX_EPOCH,
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: 'out' },
            { type: 'tool_result', tool_use_id: 'a', content: 'boom', is_error: true },
          ],
        },
      ],
    };
    const content = (nativeJson(grokBotFromCommon(t))[1]!.message as JsonObject).content as JsonObject[];
    expect(content.map((b) => b.result)).toEqual([{ success: 'out' }, { failure: 'boom' }]);
  });

  it('reads thinking from `thinking`, falling back to `text`, with its signature', () => {
    const t = common(
      assistant(
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'thinking', text: 'old form' },
      ),
    );
    expect(blocks(t)).toEqual([
      { type: 'thinking', text: 'hmm', signature: 'sig' },
      { type: 'thinking', text: 'old form' },
    ]);
  });

  it('takes timestamps from records (epoch-ms string, number, ISO; C10), inheriting forward', () => {
    const at = new Date(1788485400095).toISOString();
    expect(at).toBe('2026-09-04T01:30:00.095Z');
    expect(normalizeTimestamp('1788485400095')).toBe(at);
    expect(normalizeTimestamp(1788485400095)).toBe(at);
    expect(normalizeTimestamp('2026-09-04T01:30:00Z')).toBe('2026-09-04T01:30:00Z');
    expect(normalizeTimestamp('2026-09-04T03:30:00.095+02:00')).toBe(at);
    expect(normalizeTimestamp('yesterday')).toBeUndefined();
    const lines = [
      user(text('a')),
      rec({ role: 'assistant', message: { content: [text('b')] }, timestamp: 1788485400095 }),
      assistant(text('c')),
    ];
    const t = common(...lines);
    expect(t.meta.timestamp).toBe(at);
    expect(t.messages.map((m) => m.timestamp)).toEqual([at, at, at]);
    const ctx = grokBotToCommon(parseGrokBotJsonl(user(text('a'))).records, {
      sessionId: 's',
      timestamp: '2026-01-01T00:00:00.000Z',
    });
    expect([ctx.meta.timestamp, ctx.messages[0]!.timestamp]).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
    ]);
    expect(common(user(text('a'))).meta).toEqual({ id: SESSION, timestamp: UNIX_EPOCH });
  });

  it('dates a call and its result by the result success.timestamp; messages without a clock are untimed', () => {
    const sent = 1_790_000_000_000;
    const later = sent + 60_000;
    const untimed = new Set<number>();
    const t = grokBotToCommon(
      parseGrokBotJsonl(
        [
          user(text('[t0u]\nhi')),
          assistant(use('shell', { command: 'ls' })),
          tool(result('shell', { success: { stdout: 'a' } })),
          assistant(use('send_message', { text: { content: 'done' } })),
          tool(result('send_message', { success: { timestamp: String(sent), messageId: 't0s0' } })),
          user(text('[t1u]\nthanks')),
          assistant(use('send_message', { text: { content: 'bye' } })),
          tool(result('send_message', { success: { timestamp: later, messageId: 't1s0' } })),
        ].join('\n'),
      ).records,
      { sessionId: 's', timestamp: '2026-01-01T00:00:00.000Z', untimed },
    );
    const iso = (ms: number): string => new Date(ms).toISOString();
    expect(t.messages.map((m) => m.timestamp)).toEqual([
      iso(sent), // before any clock: the first one
      iso(sent),
      iso(sent),
      iso(sent), // the send, dated by its result
      iso(sent),
      iso(sent), // after it: the nearest earlier clock
      iso(later),
      iso(later),
    ]);
    expect(t.meta.timestamp).toBe(iso(sent));
    expect([...untimed]).toEqual([0, 1, 2, 5]);
    // No clock at all: the caller's time, every message untimed.
    const none = new Set<number>();
    const bare = grokBotToCommon(parseGrokBotJsonl(user(text('x'))).records, {
      sessionId: 's',
      timestamp: '2026-01-01T00:00:00.000Z',
      untimed: none,
    });
    expect([bare.meta.timestamp, [...none]]).toEqual(['2026-01-01T00:00:00.000Z', [0]]);
  });

  it('writes an id-less native file back unchanged (synthetic ids and FIFO pairing are not written)', () => {
    const lines = [
      user(text('go')),
      assistant(use('web_search', { searchTerm: 'a' }), use('web_search', { searchTerm: 'b' })),
      tool(result('web_search', { success: 1 }), result('web_search', { success: 2 })),
    ];
    const t = common(...lines);
    expect(renderGrokBotJsonl(grokBotFromCommon(t))).toBe(lines.join('\n') + '\n');
  });

  it('writes a result id only where FIFO pairing by name would pick another call', () => {
    const t: Transcript = {
      meta: { id: 's', timestamp: UNIX_EPOCH },
      messages: [
        {
          role: 'assistant',
          timestamp: UNIX_EPOCH,
          content: [
            { type: 'tool_use', id: 'x', tool: { name: 'Raw', tool_name: 'task', input: {} } },
            { type: 'tool_use', id: 'y', tool: { name: 'Raw', tool_name: 'task', input: {} } },
          ],
        },
        {
          role: 'user',
          timestamp: UNIX_EPOCH,
          content: [
            { type: 'tool_result', tool_use_id: 'y', content: { success: 'y' } },
            { type: 'tool_result', tool_use_id: 'x', content: { success: 'x' } },
          ],
        },
      ],
    };
    const native = nativeJson(grokBotFromCommon(t));
    const results = (native[1]!.message as JsonObject).content as JsonObject[];
    expect(results[0]!.toolCallId).toBe('y');
    expect(results[1]!.toolCallId).toBeUndefined();
    expect(native[0]!.message).toMatchObject({
      content: [{ input: { toolCallId: 'x' } }, { input: { toolCallId: 'y' } }],
    });
    expect(grokBotToCommon(grokBotFromCommon(t), { sessionId: 's' })).toEqual(t);
  });
});

// ---- property: toCommon(fromCommon(c)) === c for representable Common -------------------------

const TIMES = ['2026-09-10T10:00:00.000Z', '2026-09-10T10:00:01.500Z', '2026-09-11T08:30:00.000Z'];
const nonEmpty = fc.string({ minLength: 1, maxLength: 20 });
// Text that is only whitespace gives no block (txcript), so Common text always has a visible character.
const visibleText = nonEmpty.filter((s) => s.trim() !== '');
const userText = visibleText.filter((s) => !/^\[t[0-9a-z]+\]/.test(s));
const nat = fc.nat({ max: 100_000 });
// JSON has no -0: normalise generated values the way a file would.
const json: fc.Arbitrary<JsonValue> = fc
  .jsonValue({ maxDepth: 3 })
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

const typedTool: fc.Arbitrary<Tool> = fc.oneof(
  fc
    .record(
      {
        command: nonEmpty,
        timeout_ms: nat,
        description: fc.string(),
        workdir: fc.string(),
        run_in_background: fc.boolean(),
      },
      { requiredKeys: ['command'] },
    )
    .map((r): Tool => ({ name: 'Bash', ...r })),
  fc
    .record({ file_path: nonEmpty, offset: nat, limit: nat }, { requiredKeys: ['file_path'] })
    .map((r): Tool => ({ name: 'Read', ...r })),
  fc.record({ file_path: nonEmpty, content: fc.string() }).map((r): Tool => ({ name: 'Write', ...r })),
);
const rawInput: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.dictionary(
    fc.string().filter((k) => k !== 'toolCallId' && k !== '__proto__'),
    json,
    {
      maxKeys: 4,
    },
  ),
  fc.string(),
  fc.array(fc.integer(), { maxLength: 3 }),
);
const rawTool: fc.Arbitrary<Tool> = fc
  .record({
    tool_name: fc.constantFrom(
      'send_message',
      'web_search',
      'task',
      'mcp',
      'update_todos',
      'communicate_update',
    ),
    input: rawInput,
  })
  .map((r): Tool => ({ name: 'Raw', ...r }));

type Draft = { role: 'user' | 'assistant'; kind: 'plain' | 'results'; blocks: Block[]; resultCount: number };

const assistantBlock: fc.Arbitrary<Block> = fc.oneof(
  visibleText.map((t): Block => ({ type: 'text', text: t })),
  fc
    .record({ text: nonEmpty, signature: fc.string() }, { requiredKeys: ['text'] })
    .map((r): Block => ({ type: 'thinking', ...r })),
  fc.oneof(typedTool, rawTool).map((tool): Block => ({ type: 'tool_use', id: '', tool })),
);
const userBlock: fc.Arbitrary<Block> = fc.oneof(
  userText.map((t): Block => ({ type: 'text', text: t })),
  fc
    .record({ media_type: fc.constantFrom('image/png', 'image/jpeg'), data: fc.base64String() })
    .map((s): Block => ({ type: 'image', source: { type: 'base64', ...s } })),
  fc.record({ id: nonEmpty, name: nonEmpty, path: nonEmpty }).map((a): Block => ({
    type: 'artifact',
    artifact: { id: a.id, name: a.name, source: { type: 'path', path: a.path } },
  })),
);
const draft: fc.Arbitrary<Draft> = fc.oneof(
  fc
    .array(assistantBlock, { minLength: 1, maxLength: 4 })
    .map((b): Draft => ({ role: 'assistant', kind: 'plain', blocks: b, resultCount: 0 })),
  fc
    .array(userBlock, { minLength: 1, maxLength: 3 })
    .map((b): Draft => ({ role: 'user', kind: 'plain', blocks: b, resultCount: 0 })),
  fc
    .integer({ min: 1, max: 3 })
    .map((n): Draft => ({ role: 'user', kind: 'results', blocks: [], resultCount: n })),
);

const transcriptArb: fc.Arbitrary<Transcript> = fc
  .record({
    id: fc.uuid(),
    drafts: fc.array(fc.tuple(draft, fc.constantFrom(...TIMES)), { maxLength: 8 }),
    picks: fc.array(fc.tuple(fc.nat(), fc.boolean(), json), { minLength: 24, maxLength: 24 }),
    explicitIds: fc.array(fc.boolean(), { minLength: 32, maxLength: 32 }),
  })
  .map(({ id, drafts, picks, explicitIds }) => {
    const calls: string[] = [];
    let pick = 0;
    let callNo = 0;
    const messages: Message[] = drafts.map(([d, timestamp], mi): Message => {
      if (d.kind === 'plain') {
        const content = d.blocks.map((b, bi): Block => {
          if (b.type !== 'tool_use') return b;
          // Some ids look like model ids, some are the very ids the codec would synthesise.
          const n = callNo++;
          const callId = explicitIds[n % 32] ? `call_${n}` : '';
          const finalId = callId !== '' ? callId : synthetic(id, mi, bi, b.tool);
          calls.push(finalId);
          return { ...b, id: finalId };
        });
        return { role: d.role, content, timestamp };
      }
      const content = Array.from({ length: d.resultCount }, (): Block => {
        const [n, isError, value] = picks[pick++ % picks.length]!;
        const target = calls.length > 0 && n % 5 !== 0 ? calls[n % calls.length]! : `orphan_${n}`;
        return isError
          ? { type: 'tool_result', tool_use_id: target, content: { failure: value }, is_error: true }
          : { type: 'tool_result', tool_use_id: target, content: { success: value } };
      });
      return { role: 'user', content, timestamp };
    });
    return { meta: { id, timestamp: messages[0]?.timestamp ?? UNIX_EPOCH }, messages };
  });

function synthetic(session: string, recordIndex: number, blockIndex: number, tool: Tool): string {
  const name =
    tool.name === 'Bash'
      ? 'shell'
      : tool.name === 'Read'
        ? 'read'
        : tool.name === 'Raw'
          ? tool.tool_name
          : tool.name;
  return uuidV5(GROK_BOT_ID_NAMESPACE, `${session}:${recordIndex}:${blockIndex}:${name}`);
}

describe('grok_bot codec: properties', () => {
  it('toCommon(fromCommon(c)) deep-equals c, also through the text codec', () => {
    fc.assert(
      fc.property(transcriptArb, (c) => {
        const records = grokBotFromCommon(c);
        expect(grokBotToCommon(records, { sessionId: c.meta.id })).toEqual(c);
        const text = renderGrokBotJsonl(records);
        expect(grokBotToCommon(parseGrokBotJsonl(text).records, { sessionId: c.meta.id })).toEqual(c);
      }),
      { numRuns: 150 },
    );
  });

  it('box-written records survive a trip through Common unchanged', () => {
    fc.assert(
      fc.property(transcriptArb, (c) => {
        const text = renderGrokBotJsonl(grokBotFromCommon(c));
        const again = grokBotFromCommon(
          grokBotToCommon(parseGrokBotJsonl(text).records, { sessionId: c.meta.id }),
        );
        expect(renderGrokBotJsonl(again)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import {
  SIMPLE_TOOL_ID_NAMESPACE,
  SimpleFormatError,
  commonToSimple,
  createSimpleHarness,
  parseSimple,
  renderSimple,
  sessionIdForFile,
  simple,
  toUtcRfc3339,
} from './index.ts';

const fixedNow = new Date('2026-09-10T12:00:00Z');
const harness = createSimpleHarness({ now: () => fixedNow });

function toCommon(doc: unknown, sessionId = 'doc-file'): Transcript {
  const { records } = harness.text.parse(JSON.stringify(doc), 'doc.json');
  return harness.codec.toCommon(records, { sessionId });
}

describe('simple text codec', () => {
  it('rejects text that is not JSON, naming the file, line and column', () => {
    let caught: unknown;
    try {
      parseSimple('{\n  "messages": [\n    oops\n  ]\n}', 'run.json');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SimpleFormatError);
    const e = caught as SimpleFormatError;
    expect(e.message).toBe('not JSON: unexpected "o" (run.json:3:5)');
    expect(e.line).toBe(3);
    expect(e.column).toBe(5);
  });

  it('locates syntax errors the engine does not place', () => {
    const cases: [string, string][] = [
      ['{"messages": [1,]}', 'not JSON: unexpected "]" (x:1:17)'],
      ['{"messages": []', 'not JSON: unexpected end of the document, expected "," or "}" (x:1:16)'],
      ['{"messages": [], }', 'not JSON: unexpected "}", expected a key in quotes (x:1:18)'],
      ['{"a": "b\nc", "messages": []}', 'not JSON: control character in a string (x:1:9)'],
      ['{"messages": []} x', 'not JSON: unexpected "x" after the document (x:1:18)'],
      ['{"messages": [01]}', 'not JSON: unexpected "1", expected "," or "]" (x:1:16)'],
    ];
    for (const [text, message] of cases) expect(() => parseSimple(text, 'x')).toThrow(message);
  });

  it('tolerates a leading byte-order mark', () => {
    expect(parseSimple('\ufeff{"messages": []}').records.messages).toEqual([]);
  });

  it('rejects an empty document', () => {
    expect(() => parseSimple('  \n', 'x.json')).toThrow('not JSON: the document is empty (x.json)');
  });

  it('rejects a top level that is not an object with a messages array', () => {
    expect(() => parseSimple('[]', 'a.json')).toThrow(
      'the top level is an array, expected an object with a "messages" array (a.json)',
    );
    expect(() => parseSimple('{"id":"x"}', 'b.json')).toThrow(
      'the document has no "messages" array (b.json)',
    );
    expect(() => parseSimple('{"messages":{}}', 'c.json')).toThrow(
      '"messages" is an object, expected an array',
    );
  });

  it('keeps unknown keys, bad messages and unknown blocks through a native round trip', () => {
    const doc = {
      id: 's1',
      vendor: { x: [1, 2] },
      messages: [
        { role: 'user', content: 'hi', mood: 'calm' },
        { role: 'system', content: 'secret' },
        {
          role: 'assistant',
          content: [
            { type: 'hologram', beam: 3 },
            { type: 'text', text: 'ok', tint: 'blue' },
          ],
        },
        { role: 'user', content: 42 },
      ],
    };
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    const parsed = parseSimple(text, 'r.json');
    expect(renderSimple(parsed.records)).toBe(text);
    expect(parsed.warnings.map((w) => w.message)).toEqual([
      'messages[1].role: unknown role, expected "user" or "assistant"; message kept in the document, left out of the conversation',
      'messages[2].content[0].type: unknown block type "hologram"; block kept in the document, left out of the conversation',
      'messages[3].content: content is neither a string nor an array; message kept in the document, left out of the conversation',
    ]);
    expect(parsed.warnings.every((w) => w.source === 'r.json')).toBe(true);
  });

  it('warns about metadata of the wrong type and ignores it', () => {
    const { warnings } = parseSimple('{"title":5,"timestamp":"yesterday","messages":[]}', 'm.json');
    expect(warnings.map((w) => w.message)).toEqual([
      'timestamp: "yesterday" is not an RFC 3339 timestamp; ignored, kept in the document',
      'title: expected a string, got number; ignored, kept in the document',
    ]);
  });
});

describe('simple → common', () => {
  it('reads string content as one text block and roles case-insensitively', () => {
    const t = toCommon({
      messages: [
        { role: 'User', content: 'hello' },
        { role: 'ASSISTANT', content: [{ type: 'text', text: 'hi' }] },
      ],
    });
    expect(t.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', [{ type: 'text', text: 'hello' }]],
      ['assistant', [{ type: 'text', text: 'hi' }]],
    ]);
  });

  it('stamps a document without timestamp with the parse time, and messages inherit', () => {
    const t = toCommon({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b', timestamp: '2026-09-10T12:05:00+02:00' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(t.meta.timestamp).toBe('2026-09-10T12:00:00Z');
    expect(t.messages.map((m) => m.timestamp)).toEqual([
      '2026-09-10T12:00:00Z',
      '2026-09-10T10:05:00Z',
      '2026-09-10T10:05:00Z',
    ]);
  });

  it('prefers the document timestamp, then the context fallback, over the clock', () => {
    const { records } = harness.text.parse('{"messages":[]}');
    expect(
      harness.codec.toCommon(records, { sessionId: 'x', timestamp: '2026-01-01T00:00:00Z' }).meta.timestamp,
    ).toBe('2026-01-01T00:00:00Z');
    expect(toCommon({ timestamp: '2025-05-05T05:05:05.5Z', messages: [] }).meta.timestamp).toBe(
      '2025-05-05T05:05:05.5Z',
    );
  });

  it('takes the id from the document, else from the context', () => {
    expect(toCommon({ id: 'mine', messages: [] }).meta.id).toBe('mine');
    expect(toCommon({ messages: [] }, 'from-file').meta.id).toBe('from-file');
  });

  it('derives a session id from the file name, or a UUID for stdin', () => {
    expect(sessionIdForFile('/tmp/runs/session-7.json')).toBe('session-7');
    expect(sessionIdForFile('plain')).toBe('plain');
    expect(sessionIdForFile('-')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
  });

  it('gives id-less tool calls UUIDv5 ids keyed by session, message and block index', () => {
    const t = toCommon({
      id: 'sess',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'running' },
            { type: 'tool_use', name: 'Bash', input: { command: 'ls' } },
          ],
        },
      ],
    });
    const use = t.messages[1]!.content[1]!;
    expect(use).toEqual({
      type: 'tool_use',
      id: uuidV5(SIMPLE_TOOL_ID_NAMESPACE, 'sess:1:1'),
      tool: { name: 'Bash', command: 'ls' },
    });
    expect(uuidV5(SIMPLE_TOOL_ID_NAMESPACE, 'sess:1:1')).not.toBe(
      uuidV5(SIMPLE_TOOL_ID_NAMESPACE, 'sess:1:0'),
    );
  });

  it('pairs id-less results FIFO with the oldest unpaired call, skipping calls paired by id', () => {
    const t = toCommon({
      id: 's',
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', name: 'A', id: 'a' },
            { type: 'tool_use', name: 'B', id: 'b' },
            { type: 'tool_use', name: 'C' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: 'ra' },
            { type: 'tool_result', content: 'rb' },
            { type: 'tool_result', content: 'rc' },
            { type: 'tool_result', content: 'orphan' },
          ],
        },
      ],
    });
    const ids = t.messages[1]!.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : ''));
    expect(ids).toEqual([
      'a',
      'b',
      uuidV5(SIMPLE_TOOL_ID_NAMESPACE, 's:0:2'),
      uuidV5(SIMPLE_TOOL_ID_NAMESPACE, 's:1:3'),
    ]);
  });

  it('defaults tool input to null and result content to null, typing tools only when exact', () => {
    const t = toCommon({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', name: 'ping', id: 'p' },
            { type: 'tool_use', name: 'Read', id: 'r', input: { file_path: 'a', extra: 1 } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'p', is_error: true }] },
      ],
    });
    expect(t.messages[0]!.content).toEqual([
      { type: 'tool_use', id: 'p', tool: { name: 'Raw', tool_name: 'ping', input: null } },
      {
        type: 'tool_use',
        id: 'r',
        tool: { name: 'Raw', tool_name: 'Read', input: { file_path: 'a', extra: 1 } },
      },
    ]);
    expect(t.messages[1]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'p', content: null, is_error: true },
    ]);
  });

  it('leaves bad messages and unknown blocks out of the conversation', () => {
    const t = toCommon({
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: 'kept', timestamp: 'not a time' },
        { role: 'user', content: [{ type: 'video' }, { type: 'text', text: 'yes' }, { type: 'text' }] },
      ],
    });
    expect(t.messages).toHaveLength(1);
    expect(t.messages[0]!.content).toEqual([{ type: 'text', text: 'yes' }]);
  });

  it('keeps model, stop reason, usage, thinking signatures and images', () => {
    const t = toCommon({
      messages: [
        {
          role: 'assistant',
          model: 'm1',
          stop_reason: { other: 'tired' },
          usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 1 },
          content: [
            { type: 'thinking', text: 'hmm', signature: 'sig' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } },
          ],
        },
      ],
    });
    expect(t.messages[0]).toMatchObject({
      model: 'm1',
      stop_reason: { other: 'tired' },
      usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 1 },
    });
    expect(t.messages[0]!.content[0]).toEqual({ type: 'thinking', text: 'hmm', signature: 'sig' });
  });
});

describe('common → simple', () => {
  const transcript: Transcript = {
    meta: { id: 'abc', timestamp: '2026-09-10T12:00:00Z', title: 'T' },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'run' }], timestamp: '2026-09-10T12:00:00Z' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't1', tool: { name: 'Bash', command: 'ls' } },
          { type: 'tool_use', id: 't2', tool: { name: 'Raw', tool_name: 'noop', input: null } },
        ],
        timestamp: '2026-09-10T12:00:01Z',
        usage: { input_tokens: 1, output_tokens: 2 },
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'a\nb' },
          { type: 'tool_result', tool_use_id: 't2', content: null },
        ],
        timestamp: '2026-09-10T12:00:02Z',
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'artifact',
            artifact: {
              id: 'f',
              name: 'notes.md',
              source: { type: 'text', text: '# hi', media_type: 'text/markdown' },
            },
          },
        ],
        timestamp: '2026-09-10T12:00:03Z',
      },
    ],
  };

  it('writes the exact JSON form: fixed key order, absent keys omitted, 2-space, trailing newline', () => {
    const text = simple.text.render(commonToSimple(transcript));
    expect(text).toBe(
      `${JSON.stringify(
        {
          id: 'abc',
          timestamp: '2026-09-10T12:00:00Z',
          title: 'T',
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'run' }], timestamp: '2026-09-10T12:00:00Z' },
            {
              role: 'assistant',
              content: [
                { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
                { type: 'tool_use', id: 't2', name: 'noop' },
              ],
              timestamp: '2026-09-10T12:00:01Z',
              usage: { input_tokens: 1, output_tokens: 2 },
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: 't1', content: 'a\nb' },
                { type: 'tool_result', tool_use_id: 't2' },
              ],
              timestamp: '2026-09-10T12:00:02Z',
            },
            {
              role: 'assistant',
              content: [
                {
                  type: 'artifact',
                  artifact: {
                    id: 'f',
                    name: 'notes.md',
                    source: { type: 'text', text: '# hi', media_type: 'text/markdown' },
                  },
                },
              ],
              timestamp: '2026-09-10T12:00:03Z',
            },
          ],
        },
        null,
        2,
      )}\n`,
    );
    expect(text).not.toContain('null');
  });

  it('reads back to the same Common transcript', () => {
    const text = simple.text.render(simple.codec.fromCommon(transcript));
    const back = simple.codec.toCommon(simple.text.parse(text).records, { sessionId: 'other' });
    expect(back).toEqual(transcript);
  });
});

describe('toUtcRfc3339', () => {
  it('keeps UTC text verbatim, converts offsets, refuses non-dates', () => {
    expect(toUtcRfc3339('2026-09-10T12:00:00.123Z')).toBe('2026-09-10T12:00:00.123Z');
    expect(toUtcRfc3339('2026-09-10t12:00:00z')).toBe('2026-09-10T12:00:00Z');
    expect(toUtcRfc3339('2026-09-10T12:00:00-01:30')).toBe('2026-09-10T13:30:00Z');
    expect(toUtcRfc3339('2026-02-31T00:00:00Z')).toBeUndefined();
    expect(toUtcRfc3339('2026-09-10')).toBeUndefined();
  });
});

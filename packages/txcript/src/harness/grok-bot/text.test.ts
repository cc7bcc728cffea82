import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecord } from '../jsonl.ts';
import { decodeJsonlBytes, parseGrokBotJsonl, recordLine, renderGrokBotJsonl } from './text.ts';

const roundTrip = (t: string): string => renderGrokBotJsonl(parseGrokBotJsonl(t).records);

describe('grok_bot text codec', () => {
  it('renders any text back byte for byte', () => {
    const cases = [
      '',
      '\n',
      '\r\n',
      '{"role":"user","message":{"content":[]}}',
      '{"role":"user","message":{"content":[]}}\n',
      '{"a":1}\r\n{"b":2}\n{"c":3}',
      '  \n\t\r\n{"a":1}\n\n',
      '{bad json\n{"role":"supervisor","note":"x"}\n',
      '{"a":1}\r',
      'plain words\n42\n[1,2]\nnull\n',
      '\ufeff{"role":"user","message":{"content":[]}}\n',
      '{"a":"x\\u2028y"}\n{}\n',
    ];
    for (const t of cases) expect(roundTrip(t)).toBe(t);
  });

  it('keeps each line terminator, blank lines and a missing final newline', () => {
    const { records } = parseGrokBotJsonl('{"a":1}\r\n\n   \n{"b":2}');
    expect(records.map((r) => [r.kind, r.end])).toEqual([
      ['record', '\r\n'],
      ['blank', '\n'],
      ['blank', '\n'],
      ['record', ''],
    ]);
  });

  it('decodes records and keeps unknown roles and keys', () => {
    const { records, warnings } = parseGrokBotJsonl('{"role":"supervisor","note":"n","extra":{"k":true}}\n');
    expect(warnings).toEqual([]);
    expect(records[0]).toMatchObject({
      kind: 'record',
      json: { role: 'supervisor', note: 'n', extra: { k: true } },
    });
  });

  it('keeps a malformed line verbatim and warns with file and 1-based line (C17)', () => {
    const text = '{"role":"user","message":{"content":[]}}\n{"role":"user",\n[1]\n';
    const { records, warnings } = parseGrokBotJsonl(text, '/x/s.jsonl');
    expect(records[1]).toMatchObject({ kind: 'malformed', raw: '{"role":"user",', line: 2 });
    expect(records[2]).toMatchObject({ kind: 'malformed', raw: '[1]', line: 3 });
    expect(warnings.map((w) => [w.source, w.line])).toEqual([
      ['/x/s.jsonl', 2],
      ['/x/s.jsonl', 3],
    ]);
    expect(warnings[1]!.message).toMatch(/expected a JSON object, found an array/);
  });

  it('accepts a byte-order mark before the first record', () => {
    const { records } = parseGrokBotJsonl('\ufeff{"role":"user","message":{}}\n');
    expect(records[0]!.kind).toBe('record');
  });

  it('renders built records as JSON.stringify lines with a trailing newline', () => {
    expect(renderGrokBotJsonl([recordLine({ a: 1 }), recordLine({ b: 'x' })])).toBe('{"a":1}\n{"b":"x"}\n');
  });

  it('warns on invalid UTF-8 instead of throwing, and replaces the bad bytes', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
    const { text, warnings } = decodeJsonlBytes(bytes, '/box/s.jsonl');
    expect(text).toBe('{"a":"\ufffd\ufffd"}\n');
    expect(warnings).toEqual([
      { source: '/box/s.jsonl', message: expect.stringMatching(/invalid UTF-8/) as string },
    ]);
    expect(decodeJsonlBytes(Buffer.from('{"a":"é"}'), 'x').warnings).toEqual([]);
  });

  it('property: parse then render is byte-identical for generated JSONL', () => {
    const record = fc.oneof(
      fc
        .record({
          role: fc.constantFrom('user', 'assistant', 'tool'),
          text: fc.string(),
        })
        .map(({ role, text }) => JSON.stringify({ role, message: { content: [{ type: 'text', text }] } })),
      fc.string().map((note) => JSON.stringify({ role: 'supervisor', note })),
      fc
        .jsonValue()
        .map((v) => JSON.stringify({ role: 'assistant', message: { content: [{ type: 'x', v }] } })),
      fc.json(),
      fc.string(), // mostly malformed
      fc.constantFrom('', '   ', '\t', '{', '{}', '{"role":"user"'),
    );
    const line = fc.tuple(record, fc.constantFrom('\n', '\r\n'));
    const file = fc.tuple(fc.array(line, { maxLength: 20 }), fc.boolean()).map(([lines, finalNewline]) => {
      const t = lines.map(([l, e]) => l.replace(/[\r\n]/g, ' ') + e).join('');
      return finalNewline ? t : t.replace(/\r?\n$/, '');
    });
    fc.assert(
      fc.property(file, (t) => roundTrip(t) === t),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (t) => roundTrip(t) === t),
      { numRuns: 300 },
    );
  });

  it('decodes records on first use: .json keeps the tree, decodeRecord does not', () => {
    const { records } = parseGrokBotJsonl('{"role":"user","message":{"content":[]}}\n');
    const line = records[0]!;
    if (line.kind !== 'record') throw new Error('expected a record');
    expect(decodeRecord(line)).toEqual({ role: 'user', message: { content: [] } });
    expect(decodeRecord(line)).not.toBe(decodeRecord(line));
    expect(line.json).toBe(line.json);
    expect(decodeRecord(line)).toBe(line.json);
  });

  it('renders untouched lines from the source and replaced ones from their value', () => {
    const text = '{"a":1}\r\n{"b":2}\n\n{"c":3}';
    const { records } = parseGrokBotJsonl(text);
    records[1] = recordLine({ b: 'changed' });
    expect(renderGrokBotJsonl(records)).toBe('{"a":1}\r\n{"b":"changed"}\n\n{"c":3}');
    expect(renderGrokBotJsonl(records.slice(2))).toBe('\n{"c":3}');
    expect(renderGrokBotJsonl([records[3]!, records[0]!])).toBe('{"c":3}{"a":1}\r\n');
  });

  it('takes a line nested deeper than the syntax check follows as a record', () => {
    const deep = `{"a":${'['.repeat(50)}${']'.repeat(50)}}`;
    const { records, warnings } = parseGrokBotJsonl(`${deep}\n${deep.slice(0, -1)}\n`);
    expect(records.map((r) => r.kind)).toEqual(['record', 'malformed']);
    expect(warnings.map((w) => w.line)).toEqual([2]);
  });
});

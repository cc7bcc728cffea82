import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonObjectText } from './json-object-text.ts';

/** What JSON.parse says of a text: an object, or not. */
function parsesToObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

const check = (text: string): 'object' | 'invalid' | 'unknown' => jsonObjectText(text, 0, text.length);

describe('jsonObjectText', () => {
  it('agrees with JSON.parse on serialised JSON values, with and without white space', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        expect(check(text) === 'object').toBe(parsesToObject(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('never calls text an object that JSON.parse refuses: cut, spliced and mutated text', () => {
    const mutated = fc
      .tuple(fc.jsonValue(), fc.nat(), fc.nat(), fc.string({ maxLength: 3 }))
      .map(([value, at, cut, insert]) => {
        const text = JSON.stringify({ v: value });
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(Math.min(text.length, i + (cut % 3)));
      });
    fc.assert(
      fc.property(mutated, (text) => {
        const verdict = check(text);
        if (verdict === 'object') expect(parsesToObject(text)).toBe(true);
        if (verdict === 'invalid') expect(parsesToObject(text)).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses the near misses of the grammar', () => {
    for (const text of [
      '',
      '   ',
      '[1]',
      '"s"',
      '{',
      '{"a":1,}',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":1e}',
      '{"a":-}',
      '{"a":tru}',
      '{"a":"\\x"}',
      '{"a":"\\u12g4"}',
      '{"a":"tab\there"}',
      '{"a":[1,]}',
      '{"a":[1 2]}',
      '{"a":{]}',
      '{} {}',
      "{'a':1}",
      '{a:1}',
      '{"a":NaN}',
    ])
      expect(check(text), text).toBe('invalid');
    for (const text of [
      '{}',
      ' {"a":[]}\t',
      '{"a":[{},[],"\\u00e9\\n",-0.5e+10,true,false,null]}',
      '{"\\ud800":"lone surrogate"}',
    ])
      expect(check(text), text).toBe('object');
  });

  it('checks only its span, and leaves very deep nesting to JSON.parse', () => {
    const text = 'xx{"a":1}\n{"b":';
    expect(jsonObjectText(text, 2, 9)).toBe('object');
    expect(jsonObjectText(text, 10, text.length)).toBe('invalid');
    const deep = '{"a":' + '['.repeat(40) + ']'.repeat(40) + '}';
    expect(check(deep)).toBe('unknown');
  });
});

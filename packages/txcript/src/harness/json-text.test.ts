import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonObjectText, jsonTextProblem } from './json-text.ts';

/** What JSON.parse says of a text: an object, or not. */
function parsesToObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

const check = (text: string): 'object' | 'invalid' => jsonObjectText(text, 0, text.length);

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

  it('checks only its span, at any depth', () => {
    const text = 'xx{"a":1}\n{"b":';
    expect(jsonObjectText(text, 2, 9)).toBe('object');
    expect(jsonObjectText(text, 10, text.length)).toBe('invalid');
    const deep = (n: number): string => '{"a":' + '['.repeat(n) + ']'.repeat(n) + '}';
    expect(check(deep(5000))).toBe('object');
    expect(check(deep(5000).slice(0, -2) + '}}')).toBe('invalid');
  });
});

/** Whether JSON.parse accepts the text (any value). */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('jsonTextProblem', () => {
  it('finds a problem exactly when JSON.parse refuses the text, inside it', () => {
    const texts = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v, null, 1)),
      fc
        .tuple(fc.jsonValue(), fc.nat(), fc.nat(), fc.string({ maxLength: 3 }))
        .map(([value, at, cut, insert]) => {
          const text = JSON.stringify(value);
          const i = at % (text.length + 1);
          return text.slice(0, i) + insert + text.slice(Math.min(text.length, i + (cut % 3)));
        }),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const problem = jsonTextProblem(text);
        expect(problem === undefined).toBe(parses(text));
        if (problem !== undefined) {
          expect(problem.offset).toBeGreaterThanOrEqual(0);
          expect(problem.offset).toBeLessThanOrEqual(text.length);
          // Everything before the offset is a valid start of JSON: cutting there fails only for lack of text.
          expect(jsonTextProblem(text.slice(0, problem.offset))?.offset ?? problem.offset).toBe(
            problem.offset,
          );
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('says what went wrong and what was expected there', () => {
    const cases: [string, number, string][] = [
      ['', 0, 'unexpected end of the document'],
      ['[1,]', 3, 'unexpected "]"'],
      ['{"a":1', 6, 'unexpected end of the document, expected "," or "}"'],
      ['[1 2]', 3, 'unexpected "2", expected "," or "]"'],
      ['{"a" 1}', 5, 'unexpected "1", expected ":"'],
      ['{1:2}', 1, 'unexpected "1", expected a key in quotes'],
      ['{"a":1,}', 7, 'unexpected "}", expected a key in quotes'],
      ['"ab', 3, 'unterminated string'],
      ['"a\\nb\\x"', 6, 'bad escape in a string'],
      ['"\\u12g4"', 2, 'bad \\u escape'],
      ['"a\tb"', 2, 'control character in a string'],
      ['tru', 3, 'unexpected end of the document'],
      ['nul!', 3, 'unexpected "!"'],
      ['[1.]', 2, 'unexpected ".", expected "," or "]"'],
      ['[-]', 1, 'unexpected "-"'],
      ['{} x', 3, 'unexpected "x" after the document'],
    ];
    for (const [text, offset, message] of cases)
      expect(jsonTextProblem(text), text).toEqual({ offset, message });
    expect(jsonTextProblem(' [1, {"a": [null, true, -0.5e+3]}] ')).toBeUndefined();
  });
});

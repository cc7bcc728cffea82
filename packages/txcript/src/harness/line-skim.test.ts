import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forEachLatin1Line, utf8Line } from './line-skim.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'txcript-line-skim-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lines = (text: string | Buffer): string[] => {
  const file = join(dir, 'f.jsonl');
  writeFileSync(file, text);
  const out: string[] = [];
  forEachLatin1Line(file, (l) => void out.push(utf8Line(l)));
  return out;
};

describe('forEachLatin1Line', () => {
  it('gives every line without its terminator, CRLF and a missing final newline included, and skips a BOM', () => {
    expect(lines('\ufeff{"a":1}\r\n\n{"b":"é ✓ 😀"}\nlast')).toEqual([
      '{"a":1}',
      '',
      '{"b":"é ✓ 😀"}',
      'last',
    ]);
  });

  it('reads lines longer than its buffer and across chunk boundaries', () => {
    const long = `{"x":"${'y'.repeat(3 << 20)}"}`;
    const many = Array.from({ length: 50_000 }, (_, i) => `{"i":${i},"t":"ü"}`);
    expect(lines(`${long}\n${many.join('\n')}\n`)).toEqual([long, ...many]);
  });

  it('stops when asked', () => {
    const file = join(dir, 's.jsonl');
    writeFileSync(file, 'a\nb\nc\n');
    const seen: string[] = [];
    forEachLatin1Line(file, (l) => (seen.push(l), l !== 'b'));
    expect(seen).toEqual(['a', 'b']);
  });
});

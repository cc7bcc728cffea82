import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { linesOfFile } from './jsonl-file.ts';
import { linesOfText, type LineEnd, type LineSource } from './jsonl.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'txcript-jsonl-file-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const collect = (source: LineSource): [string, LineEnd, number][] => {
  const out: [string, LineEnd, number][] = [];
  source((raw, end, line) => out.push([raw, end, line]));
  return out;
};

/** The text written as a file and read back `chunk` bytes at a time. */
const fileLines = (text: string | Buffer, chunk?: number): [string, LineEnd, number][] => {
  const file = join(dir, 'f.jsonl');
  writeFileSync(file, text);
  return collect(linesOfFile(file, chunk));
};

describe('linesOfFile', () => {
  // Every shape of line the text codecs keep: a BOM, CRLF, blank and white lines, no final newline,
  // characters of 2, 3 and 4 UTF-8 bytes, and a lone CR.
  const tricky = '\ufeff{"a":1}\r\n\n  \t\n{"b":"é ✓ 😀"}\n\r\n{"c":"x\\ry"}\r\n{"d":"ü"}\nlast\r';

  it('gives the lines, terminators and numbers the whole text gives, whatever the chunk size', () => {
    const whole = collect(linesOfText(tricky));
    expect(whole.at(-1)).toEqual(['last\r', '', 8]);
    // Chunks of 1 to 40 bytes cut the text in every place: inside a CRLF, a character, a line.
    for (let chunk = 1; chunk <= 40; chunk++) expect(fileLines(tricky, chunk)).toEqual(whole);
    expect(fileLines(tricky)).toEqual(whole);
  });

  it('reads lines far longer than a chunk, and a file ending with its newline', () => {
    const long = `{"x":"${'y'.repeat(3 << 20)}"}`;
    const many = Array.from({ length: 20_000 }, (_, i) => `{"i":${i},"t":"ü"}`);
    const text = `${long}\n${many.join('\n')}\n`;
    expect(fileLines(text)).toEqual(collect(linesOfText(text)));
    expect(fileLines('')).toEqual([]);
  });

  it('decodes broken UTF-8 as reading the whole file does', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"a":"'),
      Buffer.from([0xe2, 0x9c]),
      Buffer.from('"}\n{"b":1}\n'),
    ]);
    expect(fileLines(bytes, 4)).toEqual(collect(linesOfText(bytes.toString('utf8'))));
  });

  it('throws what opening the file throws, when it is read', () => {
    const source = linesOfFile(join(dir, 'missing.jsonl'));
    expect(() => collect(source)).toThrow(/ENOENT/);
  });
});

import { describe, expect, it } from 'vitest';
import { utf8Chunks } from './text-chunks.ts';

/** Every chunk, copied as it comes (a chunk's bytes are reused for the next one). */
const copies = (pieces: Iterable<string>, size: number): Buffer[] =>
  Array.from(utf8Chunks(pieces, size), (c) => Buffer.from(c));

describe('utf8Chunks', () => {
  const pieces = ['{"a":"é"}\n', '✓😀', '', 'x'.repeat(40), '\n', 'ü'.repeat(7), '😀'.repeat(9)];

  it('gives the UTF-8 of the joined pieces, in chunks no bigger than asked, each whole characters', () => {
    const whole = Buffer.from(pieces.join(''), 'utf8');
    for (const size of [16, 24, 64, 1 << 20]) {
      const chunks = copies(pieces, size);
      expect(Buffer.concat(chunks)).toEqual(whole);
      for (const c of chunks) {
        expect(c.length).toBeGreaterThan(0);
        // A piece bigger than the size is a chunk of its own; every chunk decodes on its own.
        expect(c.length <= size || pieces.some((p) => Buffer.byteLength(p) === c.length)).toBe(true);
        expect(Buffer.from(c.toString('utf8'), 'utf8')).toEqual(c);
      }
    }
  });

  it('joins small pieces into few chunks and gives none for no text', () => {
    expect([
      ...utf8Chunks(
        Array.from({ length: 1000 }, () => 'abc'),
        1 << 20,
      ),
    ]).toHaveLength(1);
    expect(copies([], 16)).toEqual([]);
    expect(copies(['', ''], 16)).toEqual([]);
  });

  it('asks for a piece only when the chunk before it is full', () => {
    const made: number[] = [];
    function* lazy(): Generator<string> {
      for (let i = 0; i < 4; i++) {
        made.push(i);
        yield 'x'.repeat(10);
      }
    }
    // 30 bytes hold one 10-character piece for sure (3 bytes a unit at most): the second starts a chunk.
    const chunks = utf8Chunks(lazy(), 30);
    expect(String(chunks.next().value)).toBe('x'.repeat(10));
    expect(made).toEqual([0, 1]);
  });

  it('fills one buffer again for each chunk: a chunk is valid until the next is asked for', () => {
    const chunks = utf8Chunks(['a'.repeat(10), 'b'.repeat(10)], 30);
    const next = (): Buffer => {
      const r = chunks.next();
      if (r.done === true) throw new Error('no more chunks');
      return r.value;
    };
    const first = next();
    expect(first.toString()).toBe('a'.repeat(10));
    const second = next();
    expect(second.toString()).toBe('b'.repeat(10));
    expect(first.buffer).toBe(second.buffer);
    expect(first.toString()).toBe('b'.repeat(10));
  });
});

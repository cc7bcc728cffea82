import { describe, expect, it } from 'vitest';
import {
  assertLoadable,
  HEAP_BYTES_PER_FILE_BYTE,
  HEAP_BYTES_PER_STREAMED_BYTE,
  oldGenerationLimit,
  TooLargeToLoadError,
} from './memory-budget.ts';

const MIB = 1024 * 1024;

describe('assertLoadable', () => {
  it('lets a file through while its loaded size fits the heap', () => {
    expect(() => assertLoadable('/t/a.jsonl', 100 * MIB, 100 * MIB * HEAP_BYTES_PER_FILE_BYTE)).not.toThrow();
  });

  it('refuses a larger one, naming the file, the sizes and a limit that would do', () => {
    let caught: unknown;
    try {
      assertLoadable('/t/big.jsonl', 400 * MIB, 4096 * MIB);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TooLargeToLoadError);
    const e = caught as TooLargeToLoadError;
    expect(e.problem).toBe(
      'the transcript is 400 MB: loading it takes about 4800 MB of memory, and this Node.js heap stops at 4096 MB',
    );
    // 4800 MB with a quarter to spare, rounded up to whole GiB.
    expect(e.remedy).toBe(
      'raise the limit (NODE_OPTIONS=--max-old-space-size=6144) and run the command again',
    );
    expect(e.message).toBe(`/t/big.jsonl: ${e.problem}; ${e.remedy}`);
  });

  it('lets a file read line by line through at its own, smaller, cost per byte, and names that cost when it refuses', () => {
    const heap = 1024 * MIB;
    expect(() => assertLoadable('/t/s.jsonl', 200 * MIB, heap)).toThrow(TooLargeToLoadError);
    expect(() => assertLoadable('/t/s.jsonl', 200 * MIB, heap, HEAP_BYTES_PER_STREAMED_BYTE)).not.toThrow();
    let caught: unknown;
    try {
      assertLoadable('/t/s.jsonl', 400 * MIB, heap, HEAP_BYTES_PER_STREAMED_BYTE);
    } catch (e) {
      caught = e;
    }
    expect((caught as TooLargeToLoadError).problem).toBe(
      `the transcript is 400 MB: loading it takes about ${400 * HEAP_BYTES_PER_STREAMED_BYTE} MB of memory, and this Node.js heap stops at 1024 MB`,
    );
  });
});

describe('oldGenerationLimit', () => {
  it('leaves out the young generation that heap_size_limit counts', () => {
    // Node 24 with --max-old-space-size=48 reports 240 MiB: 48 of old space, 192 of semi-spaces.
    expect(oldGenerationLimit(240 * MIB)).toBe(48 * MIB);
    // Its default heap on a large machine: 4096 MiB old space.
    expect(oldGenerationLimit(4288 * MIB)).toBe(4096 * MIB);
  });
});

import { describe, expect, it } from 'vitest';
import { PendingCalls } from './pending-calls.ts';

describe('PendingCalls', () => {
  it('answers id-less results oldest first, per name', () => {
    const calls = new PendingCalls();
    calls.add('shell', 'a');
    calls.add('read', 'b');
    calls.add('shell', 'c');
    expect(calls.take('shell')).toBe('a');
    expect(calls.take('shell')).toBe('c');
    expect(calls.take('shell')).toBeUndefined();
    expect(calls.peek('read')).toBe('b');
    expect(calls.peek('read')).toBe('b');
  });

  it('skips calls an explicit id already answered', () => {
    const calls = new PendingCalls();
    calls.add('shell', 'a');
    calls.add('shell', 'b');
    calls.answer('a');
    expect(calls.take('shell')).toBe('b');
    expect(calls.peek('unknown')).toBeUndefined();
  });
});

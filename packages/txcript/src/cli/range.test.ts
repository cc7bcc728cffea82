import { describe, expect, it } from 'vitest';
import type { Message } from '../model/common.ts';
import { CliError, EXIT_USAGE } from './errors.ts';
import { narrow, parseRange, selectRange, splitTarget, toolPairs, widen } from './range.ts';

const T = '2026-09-10T12:00:00Z';
const text = (role: 'user' | 'assistant', t: string): Message => ({
  role,
  content: [{ type: 'text', text: t }],
  timestamp: T,
});
const call = (id: string): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, tool: { name: 'Bash', command: 'ls' } }],
  timestamp: T,
});
const result = (id: string): Message => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }],
  timestamp: T,
});

/** #1 user, #2 call a, #3 its result, #4 assistant text, #5 call b, #6 its result, #7 assistant text. */
const session: Message[] = [
  text('user', 'go'),
  call('a'),
  result('a'),
  text('assistant', 'next'),
  call('b'),
  result('b'),
  text('assistant', 'done'),
];

function usage(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT_USAGE);
    return err as CliError;
  }
  throw new Error('expected a usage error');
}

describe('parseRange', () => {
  it('reads the four forms', () => {
    expect(parseRange('7')).toEqual({ kind: 'span', text: '7', from: 7, to: 7 });
    expect(parseRange('5-12')).toEqual({ kind: 'span', text: '5-12', from: 5, to: 12 });
    expect(parseRange('5-')).toEqual({ kind: 'span', text: '5-', from: 5 });
    expect(parseRange('-10')).toEqual({ kind: 'last', text: '-10', count: 10 });
  });
  it('refuses backwards, empty and malformed ranges', () => {
    expect(usage(() => parseRange('12-5')).todo).toBe('write #5-12');
    expect(usage(() => parseRange('-0')).message).toBe('range #-0 selects no messages');
    expect(usage(() => parseRange('1-2-3')).message).toBe('"#1-2-3" is not a message range');
    expect(usage(() => parseRange('-')).message).toBe('"#-" is not a message range');
  });
});

describe('splitTarget', () => {
  it('splits an id from a range', () => {
    expect(splitTarget('abc#7')).toEqual({ id: 'abc', range: parseRange('7') });
    expect(splitTarget('abc')).toEqual({ id: 'abc' });
    expect(splitTarget('a#b#-3')).toEqual({ id: 'a#b', range: parseRange('-3') });
  });
  it('keeps a title with a # that is not a range whole', () => {
    expect(splitTarget('fix #bug')).toEqual({ id: 'fix #bug' });
  });
  it('refuses a dangling # and a range with no id', () => {
    usage(() => splitTarget('abc#'));
    usage(() => splitTarget('#5'));
  });
});

describe('selectRange', () => {
  it('selects everything without a range', () => {
    expect(selectRange(undefined, session)).toEqual({ start: 0, end: 7 });
  });
  it('selects spans that keep tool pairs whole', () => {
    expect(selectRange(parseRange('2-3'), session)).toEqual({ start: 1, end: 3 });
    expect(selectRange(parseRange('4'), session)).toEqual({ start: 3, end: 4 });
    expect(selectRange(parseRange('4-'), session)).toEqual({ start: 3, end: 7 });
  });
  it('takes the last N, and all of a shorter session', () => {
    expect(selectRange(parseRange('-1'), session)).toEqual({ start: 6, end: 7 });
    expect(selectRange(parseRange('-50'), session)).toEqual({ start: 0, end: 7 });
  });
  it('refuses numbers past the end, stating the message count', () => {
    const e = usage(() => selectRange(parseRange('5-9'), session));
    expect(e.message).toBe('range #5-9 is past the end: the session has 7 messages (#1-7)');
    expect(e.todo).toBe('pick numbers from 1 to 7');
    expect(usage(() => selectRange(parseRange('8'), session)).message).toContain('7 messages');
    expect(usage(() => selectRange(parseRange('0'), session)).message).toBe('range #0 starts at 0');
    expect(usage(() => selectRange(parseRange('1'), [])).message).toContain('has no messages');
  });
  it('refuses a range that cuts a call from its result and suggests the nearest whole ranges', () => {
    const e = usage(() => selectRange(parseRange('3-5'), session));
    expect(e.message).toBe('range #3-5 separates the tool call in #2 from its result in #3');
    expect(e.todo).toBe('use #4 (narrower) or #2-6 (wider) to keep tool calls with their results');
  });
  it('offers only the wider range when nothing narrower is whole', () => {
    const e = usage(() => selectRange(parseRange('2'), session));
    expect(e.todo).toBe('use #2-3 (wider) to keep tool calls with their results');
  });
  it('refuses a last-N range that starts on a result', () => {
    const e = usage(() => selectRange(parseRange('-1'), session.slice(0, 3)));
    expect(e.message).toBe('range #-1 separates the tool call in #2 from its result in #3');
    expect(e.todo).toBe('use #2-3 (wider) to keep tool calls with their results');
  });
});

describe('pair arithmetic', () => {
  const pairs = toolPairs(session);
  it('finds calls and their results across messages', () => {
    expect(pairs).toEqual([
      [1, 2],
      [4, 5],
    ]);
  });
  it('widens and narrows until no pair is cut', () => {
    expect(widen(pairs, { start: 2, end: 5 })).toEqual({ start: 1, end: 6 });
    expect(narrow(pairs, { start: 2, end: 5 })).toEqual({ start: 3, end: 4 });
    expect(narrow(pairs, { start: 1, end: 2 })).toBeUndefined();
  });
  it('ignores a call and its result inside one message', () => {
    const same: Message = { ...call('z'), content: [...call('z').content, ...result('z').content] };
    expect(toolPairs([same])).toEqual([]);
  });
});

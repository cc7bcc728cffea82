import { describe, expect, test } from 'vitest';
import {
  BOOT_TURN,
  addressTag,
  answerMessage,
  answerPrefix,
  assistantId,
  parseAddress,
  parseAnswerPrefix,
  parseMessageId,
  sendId,
  userAttachmentId,
  userMessageId,
  withAddressTag,
} from './address.ts';

describe('ids', () => {
  test('the id patterns of grok-bot-format.md §6', () => {
    expect(userMessageId(3)).toBe('t3u');
    expect(userAttachmentId(3, 1)).toBe('t3ua1');
    expect(assistantId(12, 0)).toBe('t12a0');
    expect(assistantId(BOOT_TURN, 0)).toBe('tba0');
    expect(sendId(0, 3)).toBe('t0s3');
    expect(sendId(BOOT_TURN, 1)).toBe('tbs1');
  });

  test('turns are written in decimal, so turn 11 never reads as the boot turn', () => {
    expect(sendId(11, 0)).toBe('t11s0');
    expect(sendId(11, 0)).not.toBe(sendId(BOOT_TURN, 0));
  });

  test('negative or fractional numbers are programming errors', () => {
    expect(() => userMessageId(-1)).toThrow(RangeError);
    expect(() => sendId(1.5, 0)).toThrow(/turn must be a non-negative integer/);
    expect(() => sendId(1, -2)).toThrow(/send index/);
  });

  test('parseMessageId reads every id it writes back', () => {
    const cases = [
      [userMessageId(7), { kind: 'user', turn: 7 }],
      [userAttachmentId(7, 2), { kind: 'user-attachment', turn: 7, index: 2 }],
      [assistantId(7, 1), { kind: 'assistant', turn: 7, index: 1 }],
      [assistantId(BOOT_TURN, 1), { kind: 'assistant', turn: BOOT_TURN, index: 1 }],
      [sendId(7, 4), { kind: 'send', turn: 7, index: 4 }],
      [sendId(BOOT_TURN, 0), { kind: 'send', turn: BOOT_TURN, index: 0 }],
      ['tb', { kind: 'boot-notice' }],
    ] as const;
    for (const [id, parts] of cases) expect(parseMessageId(id)).toEqual(parts);
  });

  test('parseMessageId rejects what is not an id', () => {
    for (const id of ['t3', 'tbu', 't3s', 'x3u', 't3u1', 'tbua0', '[t3u]', ''])
      expect(parseMessageId(id)).toBeUndefined();
  });
});

describe('address tags (C6)', () => {
  test('the box writes the tag then a newline', () => {
    expect(addressTag(4)).toBe('[t4u]');
    expect(withAddressTag(4, 'hello')).toBe('[t4u]\nhello');
  });

  test('parseAddress strips the tag and exactly one following newline', () => {
    expect(parseAddress('[t3u]\nhello')).toEqual({
      tag: '[t3u]',
      address: 't3u',
      turn: '3',
      turnNumber: 3,
      letter: 'u',
      rest: 'hello',
    });
    expect(parseAddress('[t3u]\r\n\nhello')?.rest).toBe('\nhello');
    expect(parseAddress('[t5u] later')?.rest).toBe('later');
    expect(parseAddress('[t5u]later')?.rest).toBe('later');
  });

  test('a tag without a letter, a tag with another letter, and a base-36 turn', () => {
    expect(parseAddress('[t1]\nx')).toMatchObject({ turn: '1', turnNumber: 1, letter: undefined, rest: 'x' });
    expect(parseAddress('[t12a]\nx')).toMatchObject({ turn: '12', turnNumber: 12, letter: 'a' });
    expect(parseAddress('[t1zu]\nx')).toMatchObject({
      address: 't1zu',
      turn: '1z',
      turnNumber: undefined,
      letter: 'u',
    });
  });

  test('round trip with withAddressTag', () => {
    for (const turn of [0, 9, 10, 35, 36, 1000]) {
      const parsed = parseAddress(withAddressTag(turn, 'body'));
      expect(parsed?.turnNumber).toBe(turn);
      expect(parsed?.address).toBe(userMessageId(turn));
      expect(parsed?.rest).toBe('body');
    }
  });

  test('no tag, or a tag not at the start, is not an address', () => {
    for (const text of ['hello', ' [t3u] x', '[T3u] x', '[t] x', '[t3u x'])
      expect(parseAddress(text)).toBeUndefined();
  });
});

describe('answer prefix', () => {
  test('the wire format', () => {
    expect(answerPrefix('t0s3', 'Deploy now?')).toBe('[Answering your question t0s3: "Deploy now?"]');
  });

  test('a multi-line prompt is written on one line', () => {
    expect(answerPrefix('tbs1', 'Pick one:\n  A or B')).toBe(
      '[Answering your question tbs1: "Pick one: A or B"]',
    );
  });

  test('parse reads id, prompt and the answer after one line break', () => {
    expect(parseAnswerPrefix(answerMessage('t2s0', 'Region?', 'EU\nUS'))).toEqual({
      id: 't2s0',
      prompt: 'Region?',
      answer: 'EU\nUS',
    });
  });

  test('a prompt holding quotes and brackets reads back', () => {
    const prompt = 'Use "fast" [beta] mode?';
    expect(parseAnswerPrefix(answerMessage('t1s0', prompt, 'Yes'))).toEqual({
      id: 't1s0',
      prompt,
      answer: 'Yes',
    });
  });

  test('text without the prefix', () => {
    expect(parseAnswerPrefix('Answering your question t1s0')).toBeUndefined();
    expect(parseAnswerPrefix('hi [Answering your question t1s0: "x"]')).toBeUndefined();
  });
});

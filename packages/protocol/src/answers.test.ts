import { describe, expect, it } from 'vitest';
import {
  HIDDEN_PROMPT_MARKER,
  questionAnswers,
  secretSavedPrompt,
  widgetAnswer,
  WidgetAnswerError,
} from './answers.ts';
import type { Widget } from './stored.ts';

const widget: Widget = {
  prompt: 'Which?',
  options: [{ label: 'Option A', value: 'a' }, { label: 'Option B', value: 'b' }, { label: 'Plain' }],
};

describe('widgetAnswer (Grok Bot shape: label in content, value in respondedValue)', () => {
  it('takes a pick by label or by value and gives both', () => {
    expect(widgetAnswer(widget, 'Option A')).toEqual({ content: 'Option A', respondedValue: 'a' });
    expect(widgetAnswer(widget, 'b')).toEqual({ content: 'Option B', respondedValue: 'b' });
    expect(widgetAnswer(widget, 'Plain')).toEqual({ content: 'Plain', respondedValue: 'Plain' });
  });
  it('joins several picks with newlines, and takes a custom answer only when allowed', () => {
    expect(widgetAnswer({ ...widget, multiSelect: true }, ['a', 'Plain'])).toEqual({
      content: 'Option A\nPlain',
      respondedValue: 'a\nPlain',
    });
    expect(() => widgetAnswer(widget, ['a', 'b'])).toThrow(WidgetAnswerError);
    expect(() => widgetAnswer(widget, 'zzz')).toThrow(/not one of the options/);
    expect(widgetAnswer({ ...widget, allowCustom: true }, 'zzz')).toEqual({
      content: 'zzz',
      respondedValue: 'zzz',
    });
    expect(() => widgetAnswer(widget, ' ')).toThrow(/empty/);
  });
  it('marks the host sentence of a saved secret as a hidden prompt', () => {
    expect(secretSavedPrompt('TOKEN').startsWith(HIDDEN_PROMPT_MARKER)).toBe(true);
  });
});

describe('questionAnswers', () => {
  const q = (id: string, type = 'widget') => ({ id, kind: 'send-message', message: { type } });
  const user = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    kind: 'message',
    role: 'user',
    ...extra,
  });
  it('links by replyTo, then a Grok Bot answer to the latest open widget, then an old sendbox respondedValue id', () => {
    const entries = [
      q('w1'),
      q('s1', 'secret-request'),
      q('w2'),
      user('u0'), // a prompt: answers nothing
      user('u1', { content: 'Option A', respondedValue: 'a', widgetSkipped: false }), // real shape: latest widget
      user('u2', { replyTo: 's1' }),
      user('u3', { respondedValue: 'w1' }), // sendbox before the real shape
      user('u4', { replyTo: 'w1' }), // already answered: first answer wins
    ];
    const answers = questionAnswers(entries);
    expect([...answers].map(([k, v]) => [k, v.id])).toEqual([
      ['w2', 'u1'],
      ['s1', 'u2'],
      ['w1', 'u3'],
    ]);
  });
});

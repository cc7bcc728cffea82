import { describe, expect, it } from 'vitest';
import { envNameFor, QuestionBook, widgetAnswerText } from './question-book.ts';
import { HostError } from './types.ts';

const widget = {
  prompt: 'Which colour?',
  options: [{ label: 'Red', value: 'r' }, { label: 'Blue' }],
};

describe('the question book', () => {
  it('opens a delivered widget once, answered questions answer 409, unknown ones 404', () => {
    const book = new QuestionBook();
    expect(book.noteSend('t0s0', 1, { type: 'text', content: 'hi' })).toBeNull();
    expect(book.noteSend('t0s1', 2, { type: 'widget', widget })).toMatchObject({ kind: 'widget' });
    expect(book.open('a', 't0s1', 'widget').prompt).toBe('Which colour?');
    expect(() => book.open('a', 't0s1', 'secret-request')).toThrow(/has no secret-request/);
    expect(() => book.open('a', 't0s0', 'widget')).toThrow(HostError);
    book.markAnswered('t0s1');
    expect(() => book.open('a', 't0s1', 'widget')).toThrow(/already answered/);
    book.unmarkAnswered('t0s1');
    expect(book.open('a', 't0s1', 'widget').id).toBe('t0s1');
  });

  it('awaits an answer only when the newest question is unanswered and came after the last user message', () => {
    const book = new QuestionBook();
    book.noteSend('t0s0', 5, { type: 'widget', widget });
    expect(book.awaitsAnswerAfter(4)).toBe(true);
    expect(book.awaitsAnswerAfter(6)).toBe(false);
    book.markAnswered('t0s0');
    expect(book.awaitsAnswerAfter(4)).toBe(false);
  });

  it('reads a widget answer as the values the model sees, and refuses what the widget does not take', () => {
    expect(widgetAnswerText(widget, 'Red')).toBe('r');
    expect(widgetAnswerText(widget, ['Blue'])).toBe('Blue');
    expect(() => widgetAnswerText(widget, ['Red', 'Blue'])).toThrow(/one answer/);
    expect(() => widgetAnswerText(widget, 'Green')).toThrow(/not one of the options/);
    expect(widgetAnswerText({ ...widget, allowCustom: true }, 'Green')).toBe('Green');
    expect(() => widgetAnswerText(widget, ' ')).toThrow(/empty/);
  });

  it('names the environment variable of a secret target', () => {
    expect(envNameFor({ kind: 'env', name: 'API_KEY' })).toBe('API_KEY');
    expect(envNameFor({ kind: 'channel-credential', platform: 'git-hub', field: 'token' })).toBe(
      'GIT_HUB_TOKEN',
    );
  });
});

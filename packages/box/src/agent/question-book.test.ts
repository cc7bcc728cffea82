import { describe, expect, it } from 'vitest';
import { envNameFor, QuestionBook, widgetAnswerOf } from './question-book.ts';
import { HostError } from './errors.ts';

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

  it('reads a widget answer as Grok Bot stores it (label and value), and refuses what the widget does not take with a 400', () => {
    expect(widgetAnswerOf(widget, 'Red')).toEqual({ content: 'Red', respondedValue: 'r' });
    expect(widgetAnswerOf(widget, ['Blue'])).toEqual({ content: 'Blue', respondedValue: 'Blue' });
    expect(() => widgetAnswerOf(widget, ['Red', 'Blue'])).toThrow(/one answer/);
    const error = (() => {
      try {
        widgetAnswerOf(widget, 'Green');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).status).toBe(400);
    expect(widgetAnswerOf({ ...widget, allowCustom: true }, 'Green')).toEqual({
      content: 'Green',
      respondedValue: 'Green',
    });
  });

  it('marks answered what a user message answers: replyTo, a Grok Bot answer, an older respondedValue id', () => {
    const book = new QuestionBook();
    book.noteSend('t0s0', 1, { type: 'widget', widget });
    book.noteSend('t0s1', 2, { type: 'widget', widget });
    book.noteAnswers([
      { id: 't0s0', kind: 'send-message', message: { type: 'widget' } },
      { id: 't0s1', kind: 'send-message', message: { type: 'widget' } },
      { id: 't1u', kind: 'message', role: 'user', content: 'Red', respondedValue: 'r', widgetSkipped: false },
    ]);
    expect(() => book.open('a', 't0s1', 'widget')).toThrow(/already answered/);
    expect(book.open('a', 't0s0', 'widget').id).toBe('t0s0');
  });

  it('names the environment variable of a secret target', () => {
    expect(envNameFor({ kind: 'env', name: 'API_KEY' })).toBe('API_KEY');
    expect(envNameFor({ kind: 'channel-credential', platform: 'git-hub', field: 'token' })).toBe(
      'GIT_HUB_TOKEN',
    );
  });
});

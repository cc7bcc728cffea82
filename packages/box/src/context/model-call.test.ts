import { describe, expect, it } from 'vitest';
import type { ModelMessage } from '../providers/types.ts';
import { injectionsLayer } from './injections.ts';
import { modelCallView, type ContextLayer } from './model-call.ts';

const user = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });

describe('the per-call view', () => {
  it('appends each layer’s system section and runs the layers over the messages in order', async () => {
    const history = [user('[t0u]\nhi')];
    const copy = structuredClone(history);
    const memory: ContextLayer = { name: 'memory', system: () => Promise.resolve('Memory: likes tea') };
    const quiet: ContextLayer = { name: 'quiet', system: () => undefined };
    const last: ContextLayer = {
      name: 'last',
      messages: (messages) => [...messages, user(`after ${messages.length} messages`)],
    };
    const view = await modelCallView('You are A.', history, [
      injectionsLayer({ guidance: 'G', sendReminderEvery: 6 }),
      memory,
      quiet,
      last,
    ]);
    expect(view.system).toBe('You are A.\n\nMemory: likes tea');
    // The injections layer ran first: `last` saw one user message carrying the guidance.
    expect(view.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: '[t0u]\nhi' },
          { type: 'text', text: '<system_reminder>\nG\n</system_reminder>' },
        ],
      },
      user('after 1 messages'),
    ]);
    expect(history).toEqual(copy);
  });

  it('without layers, is the system prompt and a copy of the history', async () => {
    const history = [user('x')];
    const view = await modelCallView('S', history, []);
    expect(view).toEqual({ system: 'S', messages: history });
    expect(view.messages).not.toBe(history);
  });
});

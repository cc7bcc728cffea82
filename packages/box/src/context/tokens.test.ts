import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from '../providers/types.ts';
import { contextWindowFor, DEFAULT_CONTEXT_TOKENS, knownContextWindow } from './context-window.ts';
import { TokenCounter, UNKNOWN_TOKENIZER_FACTOR } from './tokens.ts';

describe('TokenCounter', () => {
  it('counts exactly for a model whose tokenizer is o200k_base, and is not calibrated away from it', async () => {
    const counter = await TokenCounter.forModel('gpt-4o-mini');
    const text = 'The quick brown fox jumps over the lazy dog. <|endoftext|> is text here.';
    expect(counter.exact).toBe(true);
    expect(counter.text(text)).toBe(countTokens(text, { disallowedSpecial: new Set() }));
    counter.calibrate(1_000, 2_000);
    expect(counter.factor).toBe(1);
  });

  it('estimates conservatively for an unknown tokenizer and follows what the provider reports', async () => {
    const counter = await TokenCounter.forModel('grok-4');
    expect(counter.exact).toBe(false);
    expect(counter.scaled(1_000)).toBe(Math.ceil(1_000 * UNKNOWN_TOKENIZER_FACTOR));
    counter.calibrate(10_000, 8_000);
    expect(counter.factor).toBeCloseTo(0.84, 5);
    counter.calibrate(10_000, 14_000);
    expect(counter.factor).toBeCloseTo(1.47, 5);
    // A report too small to learn from (or nonsense) changes nothing.
    counter.calibrate(100, 1_000_000);
    counter.calibrate(10_000, 0);
    expect(counter.factor).toBeCloseTo(1.47, 5);
  });

  it('counts a message once: the same object is not tokenized again', () => {
    let calls = 0;
    const counter = new TokenCounter((text) => {
      calls += 1;
      return text.length;
    }, 'x');
    const message: ModelMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'hello' },
        { type: 'tool-call', toolCallId: 'c', toolName: 'shell', input: { command: 'ls' } },
      ],
    };
    const first = counter.message(message);
    const after = calls;
    expect(counter.message(message)).toBe(first);
    expect(calls).toBe(after);
    expect(first).toBeGreaterThan('hello'.length + JSON.stringify({ command: 'ls' }).length);
  });

  it('counts a tool schema once across turns and agents: specs in a new list, counters sharing the encoder', () => {
    const encoded: string[] = [];
    const encode = (text: string): number => {
      encoded.push(text);
      return text.length;
    };
    const schema = { type: 'object', properties: { command: { type: 'string' } } };
    const specs = () => [{ name: 'shell', description: 'Runs a command.', inputSchema: schema }];
    const first = new TokenCounter(encode, 'x').tools(specs());
    expect(encoded).toEqual(['shell', 'Runs a command.', JSON.stringify(schema)]);
    // Another agent's counter, another turn's list: nothing is serialised or encoded again.
    expect(new TokenCounter(encode, 'y').tools(specs())).toBe(first);
    expect(encoded).toHaveLength(3);
    expect(first).toBe(4 + 'shell'.length + 'Runs a command.'.length + JSON.stringify(schema).length);
  });
});

describe('context windows', () => {
  it('knows the windows of common models, and falls back to a conservative default', () => {
    expect(knownContextWindow('grok-4-fast-reasoning')).toBe(2_000_000);
    expect(knownContextWindow('grok-4-0709')).toBe(256_000);
    expect(knownContextWindow('grok-3-mini')).toBe(131_072);
    expect(knownContextWindow('openai/gpt-4o')).toBe(128_000);
    expect(knownContextWindow('qwen-unknown')).toBeUndefined();
    expect(contextWindowFor('qwen-unknown', {})).toEqual({
      tokens: DEFAULT_CONTEXT_TOKENS,
      source: 'default',
    });
    expect(contextWindowFor('grok-4', { env: { SENDBOX_MODEL_CONTEXT_TOKENS: '100_000' } })).toEqual({
      tokens: 100_000,
      source: 'environment',
    });
    expect(() => contextWindowFor('grok-4', { env: { SENDBOX_MODEL_CONTEXT_TOKENS: '12' } })).toThrow(
      /at least 2048/,
    );
  });
});

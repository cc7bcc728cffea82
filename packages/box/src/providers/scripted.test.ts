import { describe, expect, it } from 'vitest';
import { scriptedProvider, withScript } from './scripted.ts';
import type { ModelMessage, ModelStepRequest } from './types.ts';

function request(messages: ModelMessage[]): ModelStepRequest {
  return { system: 'sys', messages, tools: [] };
}

describe('scriptedProvider', () => {
  it('answers a request whose first user message carries a script from that script, by step', async () => {
    const model = scriptedProvider([{ text: 'from the main script' }]);
    const prompt = withScript('Count the files', [
      { toolCalls: [{ id: 'c1', name: 'shell', input: { command: 'ls | wc -l' } }] },
      { text: '3 files' },
    ]);
    const first = await model.step(request([{ role: 'user', content: prompt }]));
    expect(first.toolCalls).toEqual([{ id: 'c1', name: 'shell', input: { command: 'ls | wc -l' } }]);
    const second = await model.step(
      request([
        { role: 'user', content: [{ type: 'text', text: prompt }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'shell', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'shell',
              output: { type: 'text', value: '3' },
            },
          ],
        },
      ]),
    );
    expect(second.text).toBe('3 files');
    // The main script was not consumed.
    expect(model.remaining()).toBe(1);
    expect((await model.step(request([{ role: 'user', content: 'hi' }]))).text).toBe('from the main script');
  });

  it('fails a step the prompt script lacks, and turns an error string into a failed call', async () => {
    const model = scriptedProvider([]);
    const prompt = withScript('x', [{ error: 'provider down' }]);
    await expect(model.step(request([{ role: 'user', content: prompt }]))).rejects.toThrow('provider down');
    await expect(
      model.step(
        request([
          { role: 'user', content: prompt },
          { role: 'assistant', content: 'a' },
        ]),
      ),
    ).rejects.toThrow(/no step scripted/);
  });
});

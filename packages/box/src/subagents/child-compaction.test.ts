/**
 * A subagent is compacted as its parent is: a child whose job reads more than the model's window
 * holds gets its old tool outputs pruned from its own model calls, and every call it makes stays
 * inside the window (SENDBOX_MODEL_CONTEXT_TOKENS), through the real box.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedProvider, withScript } from '../providers/scripted.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';

const WINDOW = 12_000;
const FILES = 8;

let box: HostFixture | undefined;
afterEach(async () => {
  await box?.dispose();
  box = undefined;
});

function requestTokens(request: ModelStepRequest): number {
  const opts = { disallowedSpecial: new Set<string>() };
  let n = countTokens(request.system, opts) + countTokens(JSON.stringify(request.tools), opts);
  for (const message of request.messages) n += countTokens(JSON.stringify(message), opts);
  return n;
}

/** Words that do not compress into a few tokens. */
function prose(seed: number, bytes: number): string {
  const words = ['harbor', 'lantern', 'quartz', 'meadow', 'ribbon', 'cobalt', 'saffron', 'glacier'];
  let out = '';
  let x = seed * 7919 + 17;
  while (out.length < bytes) {
    x = (x * 48271) % 2147483647;
    out += `${words[x % words.length]}${x % 100} `;
  }
  return out.slice(0, bytes);
}

/** A child's call: its first message is the job, with the child's script. */
const isChild = (request: ModelStepRequest) =>
  JSON.stringify(request.messages[0] ?? '').includes('scripted-steps');

describe('a subagent on a small window', () => {
  it('has its old tool outputs pruned from its own calls, which stay inside the window', async () => {
    const reads = Array.from({ length: FILES }, (_, i) => ({
      toolCalls: [{ name: 'read', input: { path: `part-${i}.txt` } }],
    }));
    const child = withScript('Read every part file.', [...reads, { text: 'Read them all.' }]);
    let step = 0;
    const model = scriptedProvider((request) => {
      if (isChild(request)) return {}; // not reached: the child's script rides in its prompt
      step += 1;
      if (step === 1)
        return { toolCalls: [{ name: 'task', input: { description: 'read parts', prompt: child } }] };
      if (step === 2)
        return { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
      return {};
    });
    box = await hostFixture([], { provider: model, env: { SENDBOX_MODEL_CONTEXT_TOKENS: String(WINDOW) } });
    for (let i = 0; i < FILES; i++) await writeFile(path.join(box.sandbox, `part-${i}.txt`), prose(i, 4_000));
    await box.prompt('read the parts with a subagent');

    const childCalls = model.requests.filter(isChild);
    expect(childCalls).toHaveLength(FILES + 1);
    // Without compaction the last call would hold all eight parts (about 11,000 tokens of them).
    expect(Math.max(...childCalls.map(requestTokens))).toBeLessThanOrEqual(WINDOW);
    const last = JSON.stringify(childCalls.at(-1)!.messages);
    expect(last).toContain('Pruned from your context');
    expect(last).toContain(prose(FILES - 1, 4_000).slice(0, 100));
    // The child's transcript keeps every part whole.
    const transcripts = path.join(box.dataDir, 'agent-transcripts');
    const [childId] = (await readdir(transcripts)).filter((name) => name.startsWith('sand-subagent-'));
    const jsonl = await readFile(path.join(transcripts, childId!, `${childId}.jsonl`), 'utf8');
    for (let i = 0; i < FILES; i++) expect(jsonl).toContain(prose(i, 4_000).slice(-200));
  }, 120_000);
});

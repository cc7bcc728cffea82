/**
 * The token estimate's calibration survives a restart: a real box whose model reports its usage
 * learns a factor and keeps it in the data dir; a new box on the same data dir starts from it.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { AgentCompactions } from './agent-compaction.ts';
import { CalibrationBook } from './calibration-book.ts';
import { UNKNOWN_TOKENIZER_FACTOR } from './tokens.ts';

let dataDir = '';
const hosts: LocalAgentHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = '';
});

/** Twice what o200k counts in the request: a model whose tokenizer is much less dense. */
function reported(request: ModelStepRequest): number {
  const opts = { disallowedSpecial: new Set<string>() };
  const raw =
    countTokens(request.system, opts) +
    countTokens(JSON.stringify(request.tools), opts) +
    request.messages.reduce((n, m) => n + countTokens(JSON.stringify(m.content), opts), 0);
  return raw * 2;
}

const compactionsOn = (dir: string) =>
  new AgentCompactions({ provider: () => null, window: () => 100_000 }, new CalibrationBook(dir));

describe('the calibration of the token estimate', () => {
  it('is learnt from the usage the provider reports, kept in the data dir, and read back after a restart', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-calibration-'));
    const model = scriptedProvider(
      (request) =>
        request.messages.at(-1)?.role === 'tool'
          ? { inputTokens: reported(request) }
          : {
              toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Noted.' } }],
              inputTokens: reported(request),
            },
      'grok-4',
    );
    const host = await createAgentHost({ dataDir, provider: model, env: {} });
    hosts.push(host);
    const { id } = await host.createAgent({ name: 'Counting' });
    await host.sendPrompt({ agentId: id, prompt: 'hello', clientNonce: 'n1' });
    await host.idle(id);
    await host.close();
    hosts.splice(0);

    const file = path.join(dataDir, 'context-calibration.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as {
      models: Record<string, { factor: number }>;
    };
    // About 2 × 1.05 (the margin), well away from the conservative start.
    expect(saved.models['grok-4']!.factor).toBeGreaterThan(1.8);
    expect(saved.models['grok-4']!.factor).toBeLessThan(2.4);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    // A new box on the data dir starts from the learnt factor, not the default.
    const again = await compactionsOn(dataDir).counter('grok-4');
    expect(again.factor).toBe(saved.models['grok-4']!.factor);
    expect((await compactionsOn(dataDir).counter('grok-3')).factor).toBe(UNKNOWN_TOKENIZER_FACTOR);
    // An exact tokenizer is never calibrated, whatever the file says.
    await new CalibrationBook(dataDir).save('gpt-4o', 2);
    expect((await compactionsOn(dataDir).counter('gpt-4o')).factor).toBe(1);
  }, 60_000);

  it('starts again from the default when the file is not one it wrote', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-calibration-'));
    await writeFile(path.join(dataDir, 'context-calibration.json'), '{"models": "nonsense"');
    expect((await compactionsOn(dataDir).counter('grok-4')).factor).toBe(UNKNOWN_TOKENIZER_FACTOR);
    await new CalibrationBook(dataDir).save('grok-4', 1.5);
    expect((await compactionsOn(dataDir).counter('grok-4')).factor).toBe(1.5);
  });
});

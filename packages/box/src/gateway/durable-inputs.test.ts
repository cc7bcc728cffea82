/**
 * The gateway over the durable inbox: a queued prompt is visible at once as
 * pending (openAgent, listAgents, the event stream), and a full disk is 507
 * with a message saying what was not saved — for an upload too, never 413.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider } from '../providers/types.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { diskFullError, WritePoints } from '../stores/write-points.ts';
import { SseReader, startTestBox, type TestBox } from './test-support.ts';

let box: TestBox | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
});

const send = (content: string) => ({ name: 'send_message', input: { type: 'text', content } });

/** A model whose first step waits until `release()`, so later prompts stay queued. */
function gatedModel() {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const script = scriptedProvider([{ toolCalls: [send('one')] }, {}, { toolCalls: [send('two')] }, {}]);
  const model: ModelProvider = {
    provider: 'scripted',
    model: 'gated',
    step: async (request) => {
      await gate;
      return script.step(request);
    },
  };
  return { model, release };
}

describe('pending inputs through the gateway', () => {
  it('shows a queued prompt at once as pending: openAgent, listAgents and an inbox event', async () => {
    const { model, release } = gatedModel();
    box = await startTestBox(model);
    const { body } = await box.call('createAgent', { name: 'Queue' });
    const agentId = (body as { agent: { id: string } }).agent.id;
    const stream = new SseReader(await box.api(`events?agentId=${agentId}`));
    await box.call('sendPrompt', { agentId, prompt: 'first', clientNonce: 'a' });
    expect((await box.call('sendPrompt', { agentId, prompt: 'second', clientNonce: 'b' })).status).toBe(200);

    const opened = (await box.call('openAgent', { id: agentId })).body as {
      entries: Array<{ id: string }>;
      pending: Array<{ nonce: string; text: string; kind: string }>;
    };
    expect(opened.entries.map((e) => e.id)).toEqual(['t0u']);
    expect(opened.pending).toEqual([
      { nonce: 'b', kind: 'prompt', text: 'second', acceptedAt: expect.any(Number) as number },
    ]);
    const rows = (await box.call('listAgents')).body as Array<{ id: string; pendingInputs: number }>;
    expect(rows.find((r) => r.id === agentId)?.pendingInputs).toBe(1);
    const events = await stream.collect(
      (e) => e.event === 'inbox' && JSON.stringify(e.data).includes('"nonce":"b"'),
    );
    // On opening, then: a accepted, a started, b accepted.
    const counts = (list: typeof events) =>
      list.filter((e) => e.event === 'inbox').map((e) => (e.data as { pending: unknown[] }).pending.length);
    expect(counts(events)).toEqual([0, 1, 0, 1]);

    release();
    const later = await stream.collect((e) => e.event === 'entry' && (e.data as { id: string }).id === 't1e');
    expect(counts(later)).toEqual([0]);
    await stream.cancel();
  });
});

describe('a full disk through the gateway', () => {
  it('answers sendPrompt and uploadFile with 507 and what was not saved, and accepts again once space returns', async () => {
    let full = true;
    const points = new WritePoints({ fail: (store) => (full ? diskFullError(store) : null) });
    box = await startTestBox(scriptedProvider([{ toolCalls: [send('ok')] }, {}]), {
      hostOptions: { writePoints: points },
    });
    const { body } = await box.call('createAgent', { name: 'Full' });
    const agentId = (body as { agent: { id: string } }).agent.id;

    const prompt = await box.call('sendPrompt', { agentId, prompt: 'hi', clientNonce: 'x' });
    expect(prompt.status).toBe(507);
    expect((prompt.body as { error: string }).error).toMatch(
      /disk of the data dir is full, so the input was not saved.*free some space/,
    );
    const upload = await box.api('uploadFile', {
      method: 'POST',
      headers: { 'X-Agent-Id': agentId, 'X-File-Name': 'notes.txt' },
      body: 'hello',
    });
    expect(upload.status).toBe(507);
    expect(((await upload.json()) as { error: string }).error).toMatch(/the upload notes\.txt was not saved/);
    expect(box.errorLog).toEqual([]);

    full = false;
    expect((await box.call('sendPrompt', { agentId, prompt: 'hi', clientNonce: 'x' })).status).toBe(200);
  });
});

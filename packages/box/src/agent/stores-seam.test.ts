/** The session reaches an agent's data only through the stores the host's backend opens (stores/agent-stores.ts). */
import { access } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import type { StoreBackend } from '../stores/agent-stores.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { TranscriptLog } from '../stores/transcript.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';

/** A transcript held in memory, one per agent, surviving the session (as a database row set would). */
class MemoryLog implements TranscriptLog {
  readonly source = 'memory';
  text = '';
  private seen = -1;
  append(text: string): void {
    this.text += text;
    if (this.seen >= 0) this.seen = this.text.length;
  }
  read(): Promise<string> {
    this.seen = this.text.length;
    return Promise.resolve(this.text);
  }
  unchanged(): boolean {
    return this.seen === this.text.length;
  }
  close(): void {}
}

function memoryTranscripts(logs: Map<string, MemoryLog>, opened: string[]) {
  return (files: StoreBackend): StoreBackend => ({
    async open(agentId) {
      opened.push(agentId);
      const stores = await files.open(agentId);
      let log = logs.get(agentId);
      if (!log) logs.set(agentId, (log = new MemoryLog()));
      return { ...stores, transcript: log };
    },
  });
}

let fixture: HostFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

const send = (content: string) => ({
  toolCalls: [{ id: `s-${content}`, name: 'send_message', input: { type: 'text', content } }],
});

describe('the store backend', () => {
  it('is where the session writes and reads its transcript, and the files backend sees none of it', async () => {
    const logs = new Map<string, MemoryLog>();
    const opened: string[] = [];
    fixture = await hostFixture([send('first'), {}], { stores: memoryTranscripts(logs, opened) });
    await fixture.prompt('remember the word kestrel');
    expect(opened).toEqual([fixture.agentId]);
    const log = logs.get(fixture.agentId)!;
    expect(log.text).toContain('remember the word kestrel');
    expect(log.text).toContain('"first"');
    await expect(access(agentPaths(fixture.dataDir, fixture.agentId).jsonl)).rejects.toThrow();
    // The ledger is still the files backend's: the send is there.
    const sends = (await fixture.entries()).filter((entry) => entry.kind === 'send-message');
    expect(sends).toHaveLength(1);

    // A new host on the same data dir and backend reads the conversation back from the store.
    await fixture.host.close();
    const model = scriptedProvider([send('second'), {}]);
    const host = await createAgentHost({
      dataDir: fixture.dataDir,
      provider: model,
      env: {},
      stores: memoryTranscripts(logs, opened),
    });
    fixture.host = host;
    await host.sendPrompt({ agentId: fixture.agentId, prompt: 'which word?', clientNonce: 'n-2' });
    await host.idle(fixture.agentId);
    expect(JSON.stringify(model.requests[0]!.messages)).toContain('remember the word kestrel');
    expect(log.text).toContain('"second"');
    await expect(access(agentPaths(fixture.dataDir, fixture.agentId).jsonl)).rejects.toThrow();
  });
});

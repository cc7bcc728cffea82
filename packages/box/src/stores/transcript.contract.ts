/** The TranscriptLog contract: every backend's transcript passes it (run by stores/files/jsonl.test.ts). */
import { describe, expect, it } from 'vitest';
import { useBackend, type Backend } from './contract.ts';
import type { TranscriptLog } from './transcript.ts';

export function transcriptContract(backend: string, make: Backend<TranscriptLog>): void {
  describe(`TranscriptLog contract (${backend})`, () => {
    const open = useBackend(make);

    it('reads back exactly the lines appended, in order', async () => {
      const log = await open();
      expect(await log.read()).toBe('');
      log.append('{"a":1}\n');
      log.append('{"b":2}\n{"c":3}\n');
      expect(await log.read()).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
      expect(await (await open()).read()).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
    });

    it('tells its own appends from another writer’s', async () => {
      const log = await open();
      expect(log.unchanged()).toBe(false); // not read yet
      await log.read();
      expect(log.unchanged()).toBe(true);
      log.append('{"mine":1}\n');
      expect(log.unchanged()).toBe(true);
      const other = await open();
      await other.read();
      other.append('{"theirs":1}\n');
      expect(log.unchanged()).toBe(false);
      expect(await log.read()).toBe('{"mine":1}\n{"theirs":1}\n');
      expect(log.unchanged()).toBe(true);
    });

    it('ends a torn last line before the next append, so each record stays on its own line', async () => {
      const other = await open();
      other.append('{"torn":');
      const log = await open();
      await log.read();
      log.append('{"next":1}\n');
      expect(await log.read()).toBe('{"torn":\n{"next":1}\n');
    });
  });
}

/** An agent's log and those of the subagents it started, opened from one home (its stores). */
export interface AgentLogs {
  own(): Promise<TranscriptLog> | TranscriptLog;
  child(childId: string): Promise<TranscriptLog>;
}

export const CHILD_A = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-00000000000a';
export const CHILD_B = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-00000000000b';

/** A subagent's transcript (AgentStores.childTranscript): a log of its own, kept apart from its parent's and its siblings'. */
export function childTranscriptContract(backend: string, make: Backend<AgentLogs>): void {
  describe(`child TranscriptLog contract (${backend})`, () => {
    const open = useBackend(make);

    it("keeps each child's lines apart from its parent's and from another child's", async () => {
      const logs = await open();
      const a = await logs.child(CHILD_A);
      const b = await logs.child(CHILD_B);
      a.append('{"a":1}\n');
      b.append('{"b":1}\n');
      a.append('{"a":2}\n');
      const again = await (await open()).child(CHILD_A);
      expect(await again.read()).toBe('{"a":1}\n{"a":2}\n');
      expect(await b.read()).toBe('{"b":1}\n');
      expect(await (await logs.own()).read()).toBe('');
      for (const log of [a, b, again]) log.close();
    });

    it('opens only a subagent id', async () => {
      const logs = await open();
      await expect(logs.child('../other-agent')).rejects.toThrow(/not a subagent id/);
      await expect(logs.child('not-a-child')).rejects.toThrow(/not a subagent id/);
    });
  });
}

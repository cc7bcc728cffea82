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

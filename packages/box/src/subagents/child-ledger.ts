/**
 * A subagent's ledger: it has no store.db (its folder under agent-transcripts/
 * holds only the JSONL, as Grok Bot's `sand-subagent-*` folders do, and it has
 * no agents/ profile), so the entries its turn writes (thinking, tool calls,
 * notices) live in memory for the length of its run and go to the parent's
 * UI as events. After the run the steps are read back from the JSONL
 * (child-steps.ts).
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonValue, LedgerRead, LedgerRow, LedgerWriter } from '@sendbox/txcript';

export class ChildLedger implements LedgerWriter {
  private readonly rows: LedgerRow[] = [];
  private readonly kv = new Map<string, JsonValue>();

  constructor(readonly path: string) {}

  appendEntries(entries: readonly LedgerEntry[]): number[] {
    return entries.map((entry) => {
      const seq = this.rows.length + 1;
      this.rows.push({ seq, id: entry.id, entry: entry });
      return seq;
    });
  }

  appendEntry(entry: LedgerEntry): number {
    return this.appendEntries([entry])[0]!;
  }

  setKv(key: string, value: JsonValue): void {
    this.kv.set(key, value);
  }

  getKv(key: string): JsonValue | undefined {
    return this.kv.get(key);
  }

  readLedgerEntries(limit?: number): LedgerRead {
    return { rows: this.rows.slice(0, limit), warnings: [] };
  }

  readEntriesAfter(seq: number, limit?: number): LedgerRead {
    return { rows: this.rows.filter((row) => row.seq > seq).slice(0, limit), warnings: [] };
  }

  countEntries(): number {
    return this.rows.length;
  }

  userMessageTimes(): Map<string, number> {
    return new Map();
  }

  lastEntry(): LedgerRow | undefined {
    return this.rows.at(-1);
  }

  close(): void {}
}

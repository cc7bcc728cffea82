/**
 * A subagent's ledger: it has no store.db (its folder under agent-transcripts/
 * holds only the JSONL, as Grok Bot's `sand-subagent-*` folders do, and it has
 * no agents/ profile), so the entries its turn writes (thinking, tool calls,
 * notices) live in memory for the length of its run and go to the parent's
 * UI as events. After the run the steps are read back from the JSONL
 * (child-steps.ts).
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonValue, LedgerRead, LedgerRow } from '@sendbox/txcript';
import type { LedgerStore } from '../stores/ledger.ts';

export class ChildLedger implements LedgerStore {
  private readonly rows: LedgerRow[] = [];
  private readonly kv = new Map<string, JsonValue>();

  appendEntries(entries: readonly LedgerEntry[]): number[] {
    return entries.map((entry) => {
      const seq = this.rows.length + 1;
      this.rows.push({ seq, id: entry.id, entry });
      return seq;
    });
  }

  setKv(key: string, value: JsonValue): void {
    this.kv.set(key, value);
  }

  getKv(key: string): JsonValue | undefined {
    return this.kv.get(key);
  }

  updateKv(key: string, update: (current: JsonValue | undefined) => JsonValue): JsonValue {
    const next = update(this.kv.get(key));
    this.kv.set(key, next);
    return next;
  }

  readLedgerEntries(): LedgerRead {
    return { rows: [...this.rows], warnings: [] };
  }

  readEntriesAfter(seq: number): LedgerRead {
    return { rows: this.rows.filter((row) => row.seq > seq), warnings: [] };
  }

  countEntries(): number {
    return this.rows.length;
  }

  close(): void {}
}

/**
 * The transcript writer: the only place the box writes an agent's history.
 * JSONL records are rendered by txcript's grok_bot text codec and appended to
 * the agent's transcript log; ledger entries go to its ledger store, each
 * batch in one transaction. Both are append-only, so a crash at any point
 * leaves stores every reader accepts. Every record and entry is scrubbed of
 * secret values first, whatever the backend.
 *
 * A write fails whole and raises a StoreWriteError. Which store is written
 * first is the caller's write order (docs/runtime.md, "Invariants"): the
 * ledger is the commit point.
 */
import type { LedgerEntry } from '@sendbox/protocol';
import { grokBot, type GrokBotRecords } from '@sendbox/txcript';
import type { Scrubber } from '../secrets/scrub.ts';
import { StoreWriteError } from './errors.ts';
import type { LedgerStore, SequencedEntry } from './ledger.ts';
import type { TranscriptLog, TranscriptRecord } from './transcript.ts';
import { WritePoints } from './write-points.ts';

export class TranscriptWriter {
  constructor(
    readonly log: TranscriptLog,
    private readonly ledger: LedgerStore,
    private readonly scrub: () => Scrubber,
    private readonly onEntries: (entries: SequencedEntry[]) => void,
    private readonly points: WritePoints = new WritePoints(),
  ) {}

  /** Appends records to the transcript (one JSONL line each), through the grok_bot text codec. */
  appendRecords(records: readonly TranscriptRecord[]): void {
    if (records.length === 0) return;
    const scrub = this.scrub();
    const lines: GrokBotRecords = records.map((record) => ({
      kind: 'record',
      json: scrub.value({ role: record.role, message: { content: record.blocks } }),
      end: '\n',
    }));
    try {
      this.points.pass('jsonl');
      this.log.append(grokBot.text.render(lines));
    } catch (error) {
      throw new StoreWriteError('jsonl', 'the transcript record', error);
    }
  }

  /** Appends entries to the ledger in one transaction; returns them with their seq. */
  appendEntries(entries: readonly LedgerEntry[]): SequencedEntry[] {
    if (entries.length === 0) return [];
    const scrub = this.scrub();
    const clean = entries.map((entry) => scrub.value(entry));
    let seqs: number[];
    try {
      this.points.pass('ledger', clean.map((entry) => entry.id).join(' '));
      seqs = this.ledger.appendEntries(clean);
    } catch (error) {
      throw new StoreWriteError('ledger', describeEntries(clean), error);
    }
    const out = clean.map((entry, i) => ({ ...entry, seq: seqs[i] ?? -1 }));
    this.onEntries(out);
    return out;
  }
}

/** `the message t3u`, `the entries t3n0, t3e`: what a failed ledger write was. */
function describeEntries(entries: readonly LedgerEntry[]): string {
  const ids = entries.map((entry) => entry.id).join(', ');
  return entries.length === 1 ? `the ${entries[0]!.kind} entry ${ids}` : `the entries ${ids}`;
}

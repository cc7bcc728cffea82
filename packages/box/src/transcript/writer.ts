/**
 * The transcript writer: the only place the box writes an agent's history.
 * JSONL records go through txcript's grok_bot text codec and are appended to
 * `agent-transcripts/<id>/<id>.jsonl`; ledger entries go through txcript's
 * ledger module into `store.db`, each batch in one transaction. Both are
 * append-only, so a crash at any point leaves files every reader accepts.
 * Every record and entry is scrubbed of secret values first.
 *
 * A write fails whole: a JSONL append that fails part-way (a full disk) is cut
 * back to where it began, a ledger batch is one transaction, and either raises
 * a StoreWriteError. Which store is written first is the caller's write order
 * (docs/runtime.md, "Invariants"): the ledger is the commit point.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import type { LedgerEntry } from '@sendbox/protocol';
import {
  grokBot,
  type GrokBotRecords,
  type JsonObject,
  type JsonValue,
  type LedgerWriter,
} from '@sendbox/txcript';
import { StoreWriteError } from '../stores/errors.ts';
import { type SequencedEntry } from '../stores/ledger.ts';
import { WritePoints } from '../stores/write-points.ts';
import type { Scrubber } from '../secrets/scrub.ts';

/** One JSONL block, as the grok_bot codec reads it (grok-bot-format.md §3). */
export type TranscriptBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; name: string; input: JsonObject }
  | { type: 'tool_result'; name: string; result: JsonValue };

export interface TranscriptRecord {
  role: 'user' | 'assistant' | 'tool';
  blocks: TranscriptBlock[];
}

/** A JSONL file as a reader last saw it: its inode (null: it did not exist) and size in bytes. */
export interface JsonlMark {
  ino: number | null;
  size: number;
}

export class TranscriptWriter {
  private fd: number | null = null;
  /**
   * What the JSONL is if only this writer appended since the session read it; null once the file
   * was found otherwise (another writer), so the session knows to read it again.
   */
  private mark: JsonlMark | null = null;

  constructor(
    readonly jsonlPath: string,
    private readonly ledger: LedgerWriter,
    private readonly scrub: () => Scrubber,
    private readonly onEntries: (entries: SequencedEntry[]) => void,
    private readonly points: WritePoints = new WritePoints(),
  ) {}

  /** Appends records to the JSONL (one line each), through the grok_bot text codec. */
  appendRecords(records: readonly TranscriptRecord[]): void {
    if (records.length === 0) return;
    const scrub = this.scrub();
    const lines: GrokBotRecords = records.map((record) => ({
      kind: 'record',
      json: scrub.value({ role: record.role, message: { content: record.blocks } }),
      end: '\n',
    }));
    const text = grokBot.text.render(lines);
    const bytes = Buffer.from(text, 'utf8');
    let fd: number | null = null;
    let start = 0;
    let offset = 0;
    try {
      this.points.pass('jsonl');
      fd = this.open();
      start = fstatSync(fd).size;
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      // Cut a part-written append back, so no torn line stays behind (truncating frees space, so it works on a full disk).
      if (fd !== null && offset > 0) ftruncateSync(fd, start);
      throw new StoreWriteError('jsonl', 'the transcript record', error);
    }
    if (this.mark) this.mark.size += bytes.length;
  }

  /** Records what the session read (after a full read of the JSONL); closes the file so the next append reopens it. */
  expect(mark: JsonlMark): void {
    this.close();
    this.mark = { ...mark };
  }

  /** The file as this writer expects it, or null when another writer was seen changing it. */
  expected(): JsonlMark | null {
    return this.mark && { ...this.mark };
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

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Opens the JSONL for appending. If a crash left a last line without its
   * newline, one is added first, so the next record starts on its own line
   * (the torn line stays and readers skip it, C17).
   */
  private open(): number {
    if (this.fd !== null) return this.fd;
    const fd = openSync(this.jsonlPath, 'a+', 0o600);
    const info = fstatSync(fd);
    const size = info.size;
    const mark = this.mark;
    this.mark =
      mark && size === mark.size && (mark.ino === null || mark.ino === info.ino)
        ? { ino: info.ino, size }
        : null;
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        writeSync(fd, '\n');
        if (this.mark) this.mark.size += 1;
      }
    }
    this.fd = fd;
    return fd;
  }
}

/** `the message t3u`, `the entries t3n0, t3e`: what a failed ledger write was. */
function describeEntries(entries: readonly LedgerEntry[]): string {
  const ids = entries.map((entry) => entry.id).join(', ');
  return entries.length === 1 ? `the ${entries[0]!.kind} entry ${ids}` : `the entries ${ids}`;
}

/**
 * An agent's ledger entries held in memory, in seq order.
 *
 * The ledger is append-only, so a session reads store.db once and then only
 * adds to what it holds: the entries it writes itself (the ledger writer has
 * checked them) and rows another writer appended, read after the last seq it
 * knows. `openAgent`, the event backlog and `entryById` are answered from
 * here instead of re-reading and re-validating every row.
 *
 * The entries are shared with every caller: treat them as read-only.
 *
 * It also keeps the roster's preview (`lastVisible`): the last entry a user
 * sees — a send, a visible message, an attachment, a notice — never a turn
 * end, a tool call or private thinking.
 */
import type { LedgerRow } from '@sendbox/txcript';
import type { LedgerStore, SequencedEntry } from './ledger.ts';

/** What the view reads of a ledger to keep up with it. */
type LedgerSource = Pick<LedgerStore, 'countEntries' | 'readLedgerEntries' | 'readEntriesAfter'>;

export class LedgerView {
  private list: SequencedEntry[] = [];
  private readonly ids = new Map<string, SequencedEntry>();
  /**
   * Rows store.db holds as far as this view knows, rows readers skip included: the
   * row count store.db reports is compared with it to see whether another writer added rows.
   */
  rowCount = 0;
  /** `JSON.stringify` of the first `jsonCount` entries: appended to, never rebuilt, while the ledger grows. */
  private jsonText = '[]';
  private jsonCount = 0;
  private preview: SequencedEntry | undefined;

  /** Starts over from a full read of store.db (valid rows, seq order). The caller sets `rowCount`. */
  replace(rows: readonly LedgerRow[]): void {
    this.list = [];
    this.ids.clear();
    this.jsonText = '[]';
    this.jsonCount = 0;
    this.preview = undefined;
    this.addRows(rows);
  }

  /** Every row of the ledger into the view: the one full, validated read of a session's ledger. */
  readAll(ledger: LedgerSource): void {
    const count = ledger.countEntries();
    this.replace(ledger.readLedgerEntries().rows);
    this.rowCount = count;
  }

  /**
   * The ledger rows after the last seq held into the view ('added'); all of them again when rows
   * landed before it (another writer interleaved with ours). 'shrunk': fewer rows than held (a
   * store.db replaced): the caller reads it whole (or reopens it).
   */
  catchUp(ledger: LedgerSource): 'same' | 'added' | 'shrunk' {
    const count = ledger.countEntries();
    if (count < this.rowCount) return 'shrunk';
    if (count === this.rowCount) return 'same';
    const added = ledger.readEntriesAfter(this.lastSeq);
    if (this.rowCount + added.rows.length + added.warnings.length < count) this.readAll(ledger);
    else {
      this.addRows(added.rows);
      this.rowCount = Math.max(count, this.rowCount);
    }
    return 'added';
  }

  /** Rows read from store.db after `lastSeq`. The caller updates `rowCount`. */
  addRows(rows: readonly LedgerRow[]): void {
    this.push(rows.map((row) => ({ ...(row.entry as SequencedEntry), seq: row.seq })));
  }

  /** Entries this session wrote, as the writer returned them (seq filled in); counts them as rows. */
  addOwn(entries: readonly SequencedEntry[]): void {
    this.push(entries);
    this.rowCount += entries.length;
  }

  get length(): number {
    return this.list.length;
  }

  /** The highest seq held (`Number.MIN_SAFE_INTEGER` when empty). */
  get lastSeq(): number {
    return this.list.at(-1)?.seq ?? Number.MIN_SAFE_INTEGER;
  }

  /** Every entry, in seq order. */
  all(): readonly SequencedEntry[] {
    return this.list;
  }

  /** Entries with seq greater than `seq`, in seq order (a new array). */
  after(seq: number): SequencedEntry[] {
    // Binary search for the first entry past `seq`: resuming a stream near the end is O(log n).
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.list[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return this.list.slice(lo);
  }

  /**
   * `JSON.stringify(this.all())`, serialized once per entry: opening a large agent again costs
   * no serialization, and each new entry is serialized once.
   */
  json(): string {
    if (this.jsonCount < this.list.length) {
      const added = this.list.slice(this.jsonCount).map((entry) => JSON.stringify(entry));
      this.jsonText =
        this.jsonCount === 0 ? `[${added.join(',')}]` : `${this.jsonText.slice(0, -1)},${added.join(',')}]`;
      this.jsonCount = this.list.length;
    }
    return this.jsonText;
  }

  /** The roster's `lastEntry`: kind and text of the last entry a user sees, or null when there is none. */
  lastVisible(): { kind: string; text: string } | null {
    const entry = this.preview;
    if (entry === undefined) return null;
    return { kind: entry.kind, text: previewText(entry) };
  }

  /** The first entry with this id (ids are unique in the canonical DDL). */
  byId(id: string): SequencedEntry | undefined {
    return this.ids.get(id);
  }

  private push(entries: readonly SequencedEntry[]): void {
    for (const entry of entries) {
      // Out-of-order seqs cannot come from one append-only table; keep the list sorted regardless.
      if (entry.seq <= this.lastSeq) continue;
      this.list.push(entry);
      if (!this.ids.has(entry.id)) this.ids.set(entry.id, entry);
      if (isSeen(entry)) this.preview = entry;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a user sees this entry as a bubble (thinking is behind a toggle, turn ends and tool calls are not bubbles). */
function isSeen(entry: Record<string, unknown>): boolean {
  if (entry.branched === true || entry.branched === 1) return false;
  switch (entry.kind) {
    case 'send-message':
    case 'notice':
    case 'user-attachment':
      return true;
    case 'message':
      return entry.hidden !== true && typeof entry.content === 'string' && entry.content !== '';
    default:
      return false;
  }
}

/** The preview line of a seen entry. */
function previewText(entry: Record<string, unknown>): string {
  if (typeof entry.content === 'string') return entry.content;
  if (typeof entry.text === 'string') return entry.text;
  if (typeof entry.file_name === 'string') return entry.file_name;
  const message = entry.message;
  if (!isObject(message)) return '';
  if (typeof message.content === 'string') return message.content;
  if (typeof message.file_name === 'string') return message.file_name;
  if (typeof message.url === 'string') return message.url;
  if (isObject(message.widget) && typeof message.widget.prompt === 'string') return message.widget.prompt;
  if (isObject(message.secretRequest) && typeof message.secretRequest.label === 'string')
    return message.secretRequest.label;
  if (typeof message.title === 'string') return message.title;
  return typeof message.type === 'string' ? message.type : '';
}

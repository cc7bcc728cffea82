/**
 * An agent's unread state: Grok Bot's `unreadState` kv of its ledger (when the user last viewed the
 * agent, how many visible entries came since, whether they marked it unread, the last activity).
 *
 * Two kinds of writer change it: the session whose turns write entries (it counts them) and whichever
 * session the user opens the agent through (it marks all read). In one box they are one session; in
 * a cluster they may be on two workers. So the count is never written from a copy read earlier: the
 * entries counted here wait, each with its time, and are added to the stored state as it is at the
 * write (`LedgerStore.updateKv`), those the user viewed after their time left out. A "read" set
 * through another gateway during a turn is kept, and only what came after it counts.
 */
import { z } from 'zod';
import type { JsonValue } from '@sendbox/txcript';
import type { LedgerStore, SequencedEntry } from '../stores/ledger.ts';

const unreadStateSchema = z.object({
  lastActivityAt: z.number().default(0),
  lastViewedAt: z.number().default(0),
  isManuallyUnread: z.boolean().default(false),
  unreadCount: z.number().default(0),
});
export type UnreadState = z.output<typeof unreadStateSchema>;

const KEY = 'unreadState';
/** Entries the user sees as bubbles: the ones an unread count counts. */
const VISIBLE_KINDS = new Set<string>(['send-message', 'notice']);

/** Entries written here and not yet in the stored state: when, and how many were visible. */
interface Counted {
  at: number;
  visible: number;
}

function parse(value: JsonValue | undefined): UnreadState {
  const parsed = unreadStateSchema.safeParse(value ?? {});
  // A damaged value counts from nothing (it is written whole again at the next count).
  return parsed.success ? parsed.data : unreadStateSchema.parse({});
}

export class UnreadBook {
  /** The state as last read from, or written to, the ledger. */
  private stored: UnreadState = parse(undefined);
  private counted: Counted[] = [];
  /** When the user last viewed the agent while its entries came here (it was focused), not yet stored. */
  private viewedHere = 0;

  constructor(
    private readonly ledger: () => Pick<LedgerStore, 'getKv' | 'updateKv'>,
    private readonly now: () => number,
    /** True while the user has this agent open: its entries are read as they come. */
    private readonly focused: () => boolean,
  ) {}

  /** The state as the roster shows it: the stored one with what was counted here since. */
  get current(): UnreadState {
    return this.merged(this.stored);
  }

  /** Reads the stored state again (another writer may have changed it). */
  reload(): void {
    this.stored = parse(this.ledger().getKv(KEY));
  }

  /** The user opened the agent: everything is read, stored now. */
  markRead(): void {
    this.viewedHere = Math.max(this.viewedHere, this.now());
    this.write((stored) => ({ ...this.merged(stored), unreadCount: 0, isManuallyUnread: false }));
  }

  /**
   * Counts entries just written. Stored at a turn's end or an upload, not per entry (one commit per
   * send, not two); when it cannot be stored (a full disk) the count waits for the next one.
   */
  count(entries: readonly SequencedEntry[]): void {
    const at = this.now();
    if (this.focused()) {
      this.viewedHere = at;
      this.counted = [];
    }
    this.counted.push({ at, visible: this.focused() ? 0 : visibleIn(entries) });
    if (!entries.some((entry) => entry.kind === 'turn-ended' || entry.kind === 'user-attachment')) return;
    try {
      this.write((stored) => this.merged(stored));
    } catch {
      // Stored with the next turn's end.
    }
  }

  /** `stored` with the entries counted here: those after the latest view, wherever it was made. */
  private merged(stored: UnreadState): UnreadState {
    const viewedAt = Math.max(stored.lastViewedAt, this.viewedHere);
    // The stored count is of entries before any view made here after it was stored.
    let unreadCount = stored.lastViewedAt >= this.viewedHere ? stored.unreadCount : 0;
    let lastActivityAt = stored.lastActivityAt;
    for (const counted of this.counted) {
      if (counted.at > viewedAt) unreadCount += counted.visible;
      lastActivityAt = Math.max(lastActivityAt, counted.at);
    }
    return { ...stored, lastActivityAt, lastViewedAt: viewedAt, unreadCount };
  }

  private write(update: (stored: UnreadState) => UnreadState): void {
    this.stored = parse(this.ledger().updateKv(KEY, (value) => update(parse(value))));
    this.counted = [];
  }
}

function visibleIn(entries: readonly SequencedEntry[]): number {
  return entries.filter((entry) => VISIBLE_KINDS.has(entry.kind)).length;
}

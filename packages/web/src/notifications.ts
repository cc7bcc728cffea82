/**
 * Browser notifications while this tab is hidden (issue 18, item 7): an agent starts waiting for
 * the user (a question, a widget or a secret card), an approval card waits, or a turn ends. The
 * roster rows say all three (`state`, `awaitingApproval`); this module finds the changes between
 * two rosters and shows one notification per agent (a newer one replaces it). Message text goes in
 * only when the user opted in; otherwise the notification names the agent and what it waits for.
 */
import { useEffect, useRef } from 'react';
import type { RosterRow } from './api/types.ts';
import type { NotificationChoice } from './preferences.ts';
import { showNotification } from './pwa.ts';

export type NoticeKind = 'waiting' | 'approval' | 'finished';

export interface Notice {
  agentId: string;
  kind: NoticeKind;
}

type Snapshot = Pick<RosterRow, 'state' | 'awaitingApproval'>;

export function snapshotOf(rows: readonly RosterRow[]): Map<string, Snapshot> {
  return new Map(rows.map((row) => [row.id, { state: row.state, awaitingApproval: row.awaitingApproval }]));
}

/** What changed between two rosters that the user would want to hear of. New agents say nothing. */
export function noticesBetween(before: ReadonlyMap<string, Snapshot>, rows: readonly RosterRow[]): Notice[] {
  const notices: Notice[] = [];
  for (const row of rows) {
    const was = before.get(row.id);
    if (!was || row.readOnly) continue;
    if (row.awaitingApproval && !was.awaitingApproval) notices.push({ agentId: row.id, kind: 'approval' });
    else if (row.state === 'awaiting-user' && was.state !== 'awaiting-user') {
      notices.push({ agentId: row.id, kind: 'waiting' });
    } else if (row.state === 'idle' && was.state === 'working') {
      notices.push({ agentId: row.id, kind: 'finished' });
    }
  }
  return notices;
}

const LEADS: Record<NoticeKind, (name: string) => { title: string; body: string }> = {
  waiting: (name) => ({ title: `${name} is waiting for you`, body: 'Open sendbox to answer.' }),
  approval: (name) => ({ title: `${name} asks to run a tool`, body: 'Open sendbox to allow or deny it.' }),
  finished: (name) => ({ title: `${name} finished`, body: 'Its turn has ended.' }),
};

const MAX_BODY = 180;

/**
 * The notification's words; the agent's last message only when `includeText`. A turn that waits on
 * an approval card is `awaiting-user` too, and its state event comes before the roster row that
 * says why: a row read since that says `awaitingApproval` makes a "waiting" notice an approval's.
 */
export function describeNotice(
  notice: Notice,
  row: Pick<RosterRow, 'name' | 'lastEntry'> & Partial<Pick<RosterRow, 'awaitingApproval'>>,
  includeText: boolean,
): { title: string; body: string } {
  const kind = notice.kind === 'waiting' && row.awaitingApproval === true ? 'approval' : notice.kind;
  const lead = LEADS[kind](row.name || 'An agent');
  const text = row.lastEntry?.text.replace(/\s+/g, ' ').trim() ?? '';
  if (!includeText || text === '' || kind === 'approval') return lead;
  return { title: lead.title, body: text.length > MAX_BODY ? `${text.slice(0, MAX_BODY - 1)}…` : text };
}

/**
 * Watches the roster and notifies while the tab is hidden. `reload` reads the roster again before
 * a notification with text, or a "waiting" one: a state event arrives before the roster row that
 * carries the message, or the approval card the turn waits on.
 */
export function useAgentNotifications(
  rows: readonly RosterRow[] | null,
  choice: NotificationChoice,
  reload: () => Promise<readonly RosterRow[]>,
): void {
  const previous = useRef<Map<string, Snapshot> | null>(null);
  useEffect(() => {
    if (!rows) return;
    const before = previous.current;
    previous.current = snapshotOf(rows);
    if (!before || !choice.enabled || document.visibilityState !== 'hidden') return;
    const notices = noticesBetween(before, rows);
    if (notices.length === 0) return;
    void (async () => {
      const stale = choice.includeText || notices.some((notice) => notice.kind === 'waiting');
      const fresh = stale ? await reload().catch(() => rows) : rows;
      for (const notice of notices) {
        const row =
          fresh.find((candidate) => candidate.id === notice.agentId) ??
          rows.find((r) => r.id === notice.agentId);
        if (!row) continue;
        await showNotification({
          ...describeNotice(notice, row, choice.includeText),
          agentId: notice.agentId,
        });
      }
    })();
  }, [rows, choice.enabled, choice.includeText, reload]);
}

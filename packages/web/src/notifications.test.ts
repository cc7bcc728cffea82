import { describe, expect, it } from 'vitest';
import type { RosterRow } from './api/types.ts';
import { describeNotice, noticesBetween, snapshotOf } from './notifications.ts';

const row = (id: string, change: Partial<RosterRow> = {}): RosterRow => ({
  id,
  name: `Agent ${id}`,
  description: '',
  harness: 'box',
  updatedAt: 0,
  lastActivityAt: 0,
  lastEntry: { kind: 'send-message', text: 'The report is ready:\n  3 findings.' },
  unreadCount: 0,
  hasUnread: false,
  awaitingUserResponse: false,
  awaitingApproval: false,
  state: 'idle',
  readOnly: false,
  ...change,
});

describe('notices between two rosters', () => {
  it('names a turn that ended, a wait for the user and an approval card; nothing else', () => {
    const before = snapshotOf([
      row('a', { state: 'working' }),
      row('b', { state: 'working' }),
      row('c', { state: 'working' }),
      row('d', { state: 'awaiting-user' }),
      row('e', { state: 'idle' }),
      row('f', { state: 'working', readOnly: true }),
    ]);
    const after = [
      row('a', { state: 'idle' }),
      row('b', { state: 'awaiting-user' }),
      row('c', { state: 'working', awaitingApproval: true }),
      // Answered: working again, nothing to say; an agent already idle says nothing either.
      row('d', { state: 'working' }),
      row('e', { state: 'idle' }),
      row('f', { state: 'idle', readOnly: true }),
      // New since the last roster: no notice.
      row('g', { state: 'awaiting-user' }),
    ];
    expect(noticesBetween(before, after)).toEqual([
      { agentId: 'a', kind: 'finished' },
      { agentId: 'b', kind: 'waiting' },
      { agentId: 'c', kind: 'approval' },
    ]);
    // The same roster again: nothing new.
    expect(noticesBetween(snapshotOf(after), after)).toEqual([]);
  });

  it('keeps message text out unless the user opted in, and never puts an approval’s in', () => {
    const finished = { agentId: 'a', kind: 'finished' } as const;
    expect(describeNotice(finished, row('a'), false)).toEqual({
      title: 'Agent a finished',
      body: 'Its turn has ended.',
    });
    expect(describeNotice(finished, row('a'), true)).toEqual({
      title: 'Agent a finished',
      body: 'The report is ready: 3 findings.',
    });
    expect(describeNotice({ agentId: 'a', kind: 'approval' }, row('a'), true).body).toBe(
      'Open sendbox to allow or deny it.',
    );
    // A turn waiting on a card is awaiting-user too: once the row says so, the notice is an approval's.
    expect(
      describeNotice({ agentId: 'a', kind: 'waiting' }, row('a', { awaitingApproval: true }), true),
    ).toEqual({ title: 'Agent a asks to run a tool', body: 'Open sendbox to allow or deny it.' });
    const long = describeNotice(
      finished,
      row('a', { lastEntry: { kind: 'send-message', text: 'x'.repeat(500) } }),
      true,
    );
    expect(long.body).toHaveLength(180);
    expect(long.body.endsWith('…')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { SendReminderCounter } from '../context/send-reminder.ts';
import { TextOnlyGuard } from './text-only.ts';
import { TurnStateMachine } from './turn-state.ts';

describe('TurnStateMachine', () => {
  it('goes idle → working → awaiting-user → working → idle and blocks sends while awaiting', () => {
    const seen: string[] = [];
    const m = new TurnStateMachine('idle', (s) => seen.push(s));
    m.startTurn();
    expect(m.sendsBlocked).toBe(false);
    m.awaitUser();
    expect(m.sendsBlocked).toBe(true);
    m.endTurn(); // a turn waiting on the user stays waiting
    expect(m.state).toBe('awaiting-user');
    m.startTurn();
    m.endTurn();
    expect(seen).toEqual(['working', 'awaiting-user', 'working', 'idle']);
  });

  it('refuses transitions the machine does not have', () => {
    expect(() => new TurnStateMachine('idle').awaitUser()).toThrow(/idle → awaiting-user/);
  });
});

describe('SendReminderCounter', () => {
  it('fires at exactly the threshold, starts over after firing, and resets on a delivered send', () => {
    const c = new SendReminderCounter(2);
    c.record('shell', false);
    expect(c.takeReminder()).toBe(false);
    c.record('shell', false);
    expect(c.takeReminder()).toBe(true);
    expect(c.takeReminder()).toBe(false);
    c.record('read', false);
    c.record('send_message', false); // refused sends do not reset
    expect(c.consecutive).toBe(1);
    c.record('send_message', true);
    expect(c.consecutive).toBe(0);
    expect(() => new SendReminderCounter(0)).toThrow();
  });
});

describe('TextOnlyGuard', () => {
  it('reminds once, then asks for a notice; a delivered send ends it cleanly', () => {
    const g = new TextOnlyGuard();
    expect(g.onTurnEnd(0)).toBe('remind');
    expect(g.onTurnEnd(0)).toBe('notice');
    expect(new TextOnlyGuard().onTurnEnd(1)).toBe('done');
  });
});

import { describe, expect, it } from 'vitest';
import { isHiddenOrWake, titleFromUserText } from './title.ts';

describe('list titles (C5)', () => {
  it('never takes a hidden prompt or a wake', () => {
    for (const t of [
      '[SAND_HIDDEN_PROMPT][first run] boot',
      '[t28u]\n[SAND_HIDDEN_PROMPT][first run]',
      '[GROK_BOT_HIDDEN_PROMPT] x',
      '<system_reminder>use send_message</system_reminder>',
      '<agent_profile_update>{}</agent_profile_update>',
      '<instructions_update>x</instructions_update>',
      '[routine] daily',
      '[agent] from a peer',
      '[first run]',
      '[event]\nsomething',
      '[A background task just completed]\nresult',
      '[Answering your question t0s3: "Pick one"] A',
      '[Group chat: "room" - with bot]\nParticipants: a',
    ]) {
      expect(isHiddenOrWake(t), t).toBe(true);
      expect(titleFromUserText(t), t).toBeUndefined();
    }
  });

  it('strips the tag, collapses whitespace, trims and cuts to 80 code points', () => {
    expect(titleFromUserText('[t3u]\n  Plan   the\ntrip  ')).toBe('Plan the trip');
    expect(titleFromUserText('[inbound] hello from slack')).toBe('hello from slack');
    expect(titleFromUserText('   ')).toBeUndefined();
    const emoji = '😀'.repeat(100);
    expect(titleFromUserText(emoji)).toBe('😀'.repeat(80));
  });
});

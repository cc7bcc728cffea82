import { describe, expect, it } from 'vitest';
import { isHiddenOrWake, splitHiddenText } from './injected-text.ts';
import { titleFromUserText } from './title.ts';

describe('hidden prompts and wakes: list titles (C5)', () => {
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

describe('splitHiddenText', () => {
  it('leaves ordinary text alone', () => {
    expect(splitHiddenText('hello there')).toEqual([{ hidden: false, text: 'hello there' }]);
  });
  it('hides from a hidden-prompt marker to the end, naming the wake', () => {
    expect(splitHiddenText('[SAND_HIDDEN_PROMPT][first run] boot')).toEqual([
      { hidden: true, kind: 'first run', text: '[SAND_HIDDEN_PROMPT][first run] boot' },
    ]);
    expect(splitHiddenText('room says hi [SAND_HIDDEN_PROMPT]tail')).toEqual([
      { hidden: false, text: 'room says hi' },
      { hidden: true, kind: 'hidden prompt', text: '[SAND_HIDDEN_PROMPT]tail' },
    ]);
    expect(splitHiddenText('[SAND_HIDDEN_PROMPT]<<SAND_AGENT_PROFILE_UPDATE {}>>')[0]).toMatchObject({
      kind: 'profile update',
    });
  });
  it('hides whole wakes and only the bracket of prefix wakes', () => {
    expect(splitHiddenText('[event]\nsomething happened')).toEqual([
      { hidden: true, kind: 'event', text: '[event]\nsomething happened' },
    ]);
    expect(splitHiddenText('[Group chat: "ops" - with bot]\nParticipants: a')[0]).toMatchObject({
      hidden: true,
      kind: 'group chat',
    });
    expect(splitHiddenText('[inbound] deploy please')).toEqual([
      { hidden: true, kind: 'inbound', text: '[inbound]' },
      { hidden: false, text: 'deploy please' },
    ]);
  });
  it('hides injected tags anywhere, including an unclosed one', () => {
    expect(splitHiddenText('a <instructions_update>x</instructions_update> b')).toEqual([
      { hidden: false, text: 'a' },
      { hidden: true, kind: 'instructions_update', text: '<instructions_update>x</instructions_update>' },
      { hidden: false, text: 'b' },
    ]);
    expect(splitHiddenText('<system_reminder>never closed')).toEqual([
      { hidden: true, kind: 'system_reminder', text: '<system_reminder>never closed' },
    ]);
  });
});

describe('splitHiddenText: a record of concatenated wakes', () => {
  // Written for this test after the shape of the public parity fixture: one record, several wakes.
  const record = [
    '[SAND_HIDDEN_PROMPT][A background task just completed]',
    'The build you started finished.',
    'Result: green',
    '[routine] Tidy the notes folder.',
    '[agent] Handing over the release list.',
    '[inbound] Could you draft the changelog?',
    '[object Object]',
    '[Group chat: "Ops" - with Builder]',
    'Participants: Builder (ci)',
    'Mia: is it out?',
    "It's your turn, Helper.",
  ].join('\n');

  it('splits at each wake and hides only the injected parts', () => {
    const segments = splitHiddenText(record);
    expect(segments.map((s) => (s.hidden ? `hidden:${s.kind}` : `user:${s.text}`))).toEqual([
      'hidden:background task',
      'hidden:routine',
      'hidden:agent',
      'hidden:inbound',
      'user:Could you draft the changelog?',
      'hidden:malformed wake',
      'hidden:group chat',
    ]);
    // Nothing is lost: the pieces hold the whole record.
    expect(
      segments
        .map((s) => s.text)
        .join('')
        .replace(/\s/g, ''),
    ).toBe(record.replace(/\s/g, ''));
  });

  it('gives the inbound prompt as the title', () => {
    expect(titleFromUserText(record)).toBe('Could you draft the changelog?');
  });

  it('splits at a later marker too, and hides opaque host text after a leading one', () => {
    expect(
      splitHiddenText(
        '[Group chat: "Ops" - with Builder]\nMia: hi\n[SAND_HIDDEN_PROMPT]<<SAND_AGENT_PROFILE_UPDATE {}>>',
      ),
    ).toMatchObject([
      { hidden: true, kind: 'group chat' },
      { hidden: true, kind: 'profile update' },
    ]);
    expect(splitHiddenText('[SAND_HIDDEN_PROMPT]You asked earlier and got no answer')).toMatchObject([
      { hidden: true, kind: 'hidden prompt' },
    ]);
    expect(
      splitHiddenText('[SAND_HIDDEN_PROMPT][SAND_TRUSTED_AUTOMATION_PROMPT]\n\n[routine] Weekly check.'),
    ).toMatchObject([
      { hidden: true, kind: 'trusted automation' },
      { hidden: true, kind: 'routine' },
    ]);
  });

  it('never cuts a user message that only mentions a wake on a later line', () => {
    expect(splitHiddenText('Please run this:\n[routine] is a tag I saw')).toEqual([
      { hidden: false, text: 'Please run this:\n[routine] is a tag I saw' },
    ]);
  });
});

describe('isHiddenOrWake', () => {
  it('is false for typed text, inbound channel messages and unknown brackets', () => {
    for (const t of ['hello', '[t1u]\nplan the trip', '[inbound] deploy please', '[note] keep this'])
      expect(isHiddenOrWake(t), t).toBe(false);
  });
  it('reads wakes the way the view does, whatever their case', () => {
    expect(isHiddenOrWake('[Routine] weekly')).toBe(true);
    expect(splitHiddenText('[Routine] weekly')[0]).toMatchObject({ hidden: true, kind: 'routine' });
  });
});

/** The thin line of a ledger `event`: a rename, a routine change (Grok Bot's automation-changed), others by type. */
import type { EventEntry } from '@sendbox/protocol';
import { describe, expect, it } from 'vitest';
import { eventText } from './EventBubble.tsx';

const entry = (event: EventEntry['event']): EventEntry => ({
  id: 'ev',
  kind: 'event',
  timestampMs: 0,
  event,
});

describe('eventText', () => {
  it('says what happened to a routine, by its name', () => {
    const changed = (action: string) =>
      eventText(entry({ type: 'automation-changed', action, automationId: 'r-1', automationName: 'Digest' }));
    expect(changed('created')).toBe('Created routine “Digest”');
    expect(changed('disabled')).toBe('Paused routine “Digest”');
    expect(changed('enabled')).toBe('Resumed routine “Digest”');
    expect(changed('deleted')).toBe('Deleted routine “Digest”');
    expect(changed('renamed')).toBe('Changed routine “Digest”');
  });

  it('keeps renames, and names an unknown type', () => {
    expect(eventText(entry({ type: 'name-changed', from: 'A', to: 'B' }))).toBe('Renamed from “A” to “B”');
    expect(eventText(entry({ type: 'channel-connected' }))).toBe('Agent event: channel-connected');
  });
});

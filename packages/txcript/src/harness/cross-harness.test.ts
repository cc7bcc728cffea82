/**
 * One conversation carried through every harness's codec in turn, its block
 * signature checked after each hop (a lost block, a changed tool, a dropped
 * error flag shows at the hop that did it). Each hop goes native and back
 * through the records, and, for harnesses whose native text is the whole
 * session, through the text as well.
 */
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../model/common.ts';
import { blockSignature, sampleConversation } from './claude-code/conversation.fixture.ts';
import { repairToolPairing } from './orphans.ts';
import { harnesses } from './registry.ts';
import type { Harness } from './types.ts';

/** Harnesses whose native text is not a whole session (the Grok CLI's is its model log alone). */
const PARTIAL_TEXT = new Set(['grok']);

function hop(h: Harness, t: Transcript): Transcript {
  const ctx = { sessionId: t.meta.id };
  const records = h.codec.fromCommon(t);
  const viaRecords = h.codec.toCommon(records, ctx);
  if (PARTIAL_TEXT.has(h.id)) return viaRecords;
  const text = h.text.render(records);
  expect(h.text.render(h.text.parse(text).records), `${h.id} text`).toBe(text);
  const viaText = h.codec.toCommon(h.text.parse(text).records, ctx);
  expect(blockSignature(viaText), `${h.id} via text`).toEqual(blockSignature(viaRecords));
  return viaText;
}

describe('cross-harness', () => {
  it('carries one conversation through every codec with its blocks intact', () => {
    const start = repairToolPairing(sampleConversation());
    const expected = blockSignature(start);
    let t = start;
    const order = [...harnesses, ...harnesses.slice().reverse()];
    for (const h of order) {
      t = hop(h, t);
      expect(blockSignature(t), `after ${h.id}`).toEqual(expected);
    }
    expect(harnesses.map((h) => h.id)).toEqual(
      expect.arrayContaining([
        'pi',
        'campfire',
        'grok',
        'amp',
        'opencode',
        'cursor',
        'cursor_desktop',
        'hermes',
        'antigravity',
        'cowork',
      ]),
    );
  });
});

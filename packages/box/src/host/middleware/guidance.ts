/**
 * What a user turn is in the transcript: the user's text under its `[t<N>u]`
 * address tag, and nothing else. Grok Bot appends its send_message guidance
 * to every user turn (seed 000), yet no real JSONL record holds it: it is
 * added when the model is called, never written (see `withInjections` in
 * ./injections.ts and docs/formats/grok-bot.md "What the box writes").
 */
import { withAddressTag } from '@sendbox/protocol';

/** `[t<N>u]\n<text>`: the user record's one text block. */
export function userTurnText(turn: number, text: string): string {
  return withAddressTag(turn, text);
}

/**
 * The guidance middleware: every user turn the model reads is the user's
 * text under its `[t<N>u]` address tag, followed by the send_message guidance
 * in a `<system_reminder>` block, both in the user role (seed 000: the
 * guidance is not in the system prompt, and the UI never shows it: the
 * ledger's `message` entry carries only what the user typed).
 */
import { withAddressTag, wrapSystemReminder } from '@sendbox/protocol';

export interface UserTurnBlocks {
  /** `[t<N>u]\n<text>`. */
  tagged: string;
  /** The guidance wrapped in `<system_reminder>`; absent when the feature is off. */
  reminder?: string;
}

export function userTurnBlocks(turn: number, text: string, guidance: string | undefined): UserTurnBlocks {
  const tagged = withAddressTag(turn, text);
  return guidance ? { tagged, reminder: wrapSystemReminder(guidance) } : { tagged };
}

/** The blocks as text parts, in order. */
export function userTurnTexts(blocks: UserTurnBlocks): string[] {
  return blocks.reminder === undefined ? [blocks.tagged] : [blocks.tagged, blocks.reminder];
}

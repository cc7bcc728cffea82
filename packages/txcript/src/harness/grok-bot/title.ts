/**
 * Which user text may become a list title (grok-bot-format.md §4; sendbox
 * decision C5: hidden prompts and wakes stay in Common, but never as a title).
 */
import { stripAddressTag } from './codec.ts';

/** Injected text that the user never typed. */
const HIDDEN_PREFIXES = [
  '[SAND_HIDDEN_PROMPT]',
  '[GROK_BOT_HIDDEN_PROMPT',
  '<system_reminder>',
  '<agent_profile_update>',
  '<instructions_update>',
];

/** Wakes: scheduled runs, agent-to-agent turns, events, answers to widgets, group-chat turns. */
const WAKE_PREFIXES = [
  '[routine]',
  '[agent]',
  '[first run]',
  '[event]',
  '[A background task just completed]',
  '[Answering your question ',
  '[Group chat:',
];

/** A channel message: the rest is a real prompt (VR). */
const INBOUND = '[inbound]';

export const TITLE_MAX_CHARS = 80;

/** True for hidden prompts and wakes (after the address tag is removed). */
export function isHiddenOrWake(text: string): boolean {
  const t = stripAddressTag(text).trimStart();
  return HIDDEN_PREFIXES.some((p) => t.startsWith(p)) || WAKE_PREFIXES.some((p) => t.startsWith(p));
}

/**
 * The title a user text gives, or undefined when it is hidden, a wake or
 * empty: tag stripped, whitespace collapsed to single spaces (a title is one
 * line), trimmed, cut to 80 characters (code points, never half a surrogate pair).
 */
export function titleFromUserText(text: string): string | undefined {
  if (isHiddenOrWake(text)) return undefined;
  let t = stripAddressTag(text).trim();
  if (t.startsWith(INBOUND)) t = t.slice(INBOUND.length);
  t = t.replace(/\s+/g, ' ').trim();
  if (t === '') return undefined;
  const chars = Array.from(t);
  return chars.length > TITLE_MAX_CHARS ? chars.slice(0, TITLE_MAX_CHARS).join('') : t;
}

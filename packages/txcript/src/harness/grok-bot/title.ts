/**
 * Which user text may become a list title (grok-bot-format.md §4; sendbox
 * decision C5: hidden prompts and wakes stay in Common, but never as a title).
 */
import { stripAddressTag } from './codec.ts';
import { isHiddenOrWake, stripInboundPrefix } from './injected-text.ts';

export const TITLE_MAX_CHARS = 80;

/**
 * The title a user text gives, or undefined when it is hidden, a wake or
 * empty: tag stripped, whitespace collapsed to single spaces (a title is one
 * line), trimmed, cut to 80 characters (code points, never half a surrogate pair).
 */
export function titleFromUserText(text: string): string | undefined {
  if (isHiddenOrWake(text)) return undefined;
  const t = stripInboundPrefix(stripAddressTag(text).trim()).replace(/\s+/g, ' ').trim();
  if (t === '') return undefined;
  const chars = Array.from(t);
  return chars.length > TITLE_MAX_CHARS ? chars.slice(0, TITLE_MAX_CHARS).join('') : t;
}

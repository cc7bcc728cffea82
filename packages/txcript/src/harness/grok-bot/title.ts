/**
 * Which user text may become a list title (grok-bot-format.md §4; sendbox
 * decision C5: hidden prompts and wakes stay in Common, but never as a title).
 */
import { stripAddressTag } from './address-tag.ts';
import { splitHiddenText } from './injected-text.ts';

export const TITLE_MAX_CHARS = 80;

/**
 * The title a user text gives: its first part the user typed (hidden
 * prompts and wakes skipped, also inside a record of concatenated wakes),
 * or undefined when it has none: tag stripped, whitespace collapsed to single spaces (a title is one
 * line), trimmed, cut to 80 characters (code points, never half a surrogate pair).
 */
export function titleFromUserText(text: string): string | undefined {
  // The first piece the user typed; the text after an answer's bracket is a pick, not a topic.
  let t: string | undefined;
  let previous: string | undefined;
  for (const segment of splitHiddenText(stripAddressTag(text))) {
    if (!segment.hidden && previous !== 'answering a question') {
      t = segment.text.replace(/\s+/g, ' ').trim();
      if (t !== '') break;
    }
    previous = segment.hidden ? segment.kind : undefined;
  }
  if (t === undefined || t === '') return undefined;
  const chars = Array.from(t);
  return chars.length > TITLE_MAX_CHARS ? chars.slice(0, TITLE_MAX_CHARS).join('') : t;
}

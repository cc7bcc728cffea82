/**
 * The word index beside the trigram one: each message's text as words
 * (FTS5's `ascii` tokenizer: a word is a run of ASCII letters and digits and
 * of any character outside ASCII; only ASCII letters are folded), with only
 * which messages hold each word (no positions), plus a vocabulary of every
 * word indexed.
 *
 * A term of ASCII letters and digits alone occurs in a text exactly when one
 * of the text's words contains it, so such a term is answered by the words
 * of the vocabulary that contain it, ORed: one short list per word rather
 * than the trigram index's walk over the positions of every trigram of the
 * term, each of them common. A phrase, or a term with punctuation, narrows
 * to the messages holding the words its pieces must be (`wordPieces`), and
 * those are checked in JavaScript. Accents, `~` and words in too many words
 * of the vocabulary are the trigram index's.
 */
import type { Kind } from './kinds.ts';
import { TRIGRAM } from './query.ts';

/** A term past this many words of the vocabulary is left to the trigram index (an OR of many lists walks them all). */
export const MAX_WORDS_PER_TERM = 16;

/**
 * KELVIN SIGN is the one character outside ASCII whose lower case is an
 * ASCII letter (foldCase makes it `k`); the tokenizer folds ASCII only.
 */
const KELVIN = '\u212a';

/** What the word index is given of a message: its texts, one per line (a word never spans two). */
export function wordText(texts: Readonly<Record<Kind, string>>, kinds: readonly Kind[]): string {
  const text = kinds.map((k) => texts[k]).join('\n');
  return text.includes(KELVIN) ? text.replaceAll(KELVIN, 'k') : text;
}

/** Whether a code unit belongs to a word, as the `ascii` tokenizer decides. */
function inWord(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 128;
}

/** Add the words of `text` (as the tokenizer folds them) that a term could be found in to `into`. */
export function collectWords(text: string, into: Set<string>): void {
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && inWord(text.charCodeAt(i))) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      // A shorter word cannot hold a term the word index answers.
      if (i - start >= TRIGRAM) into.add(asciiLower(text.slice(start, i)));
      start = -1;
    }
  }
}

function asciiLower(word: string): string {
  return /[A-Z]/.test(word) ? word.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : word;
}

/** Where a piece of a term lies in the word of a text holding the term. */
export type Place = 'inside' | 'start' | 'end' | 'whole';

/**
 * The pieces of a term (lower-cased) between the characters that separate
 * words, each with where it lies in a word of a text that holds the term: a
 * piece with a separator on both sides in the term is a whole word; the
 * first piece, a separator after it, ends a word; the last one starts one; a
 * term without separators is inside one. Only pieces of ASCII letters and
 * digits are given (the tokenizer folds nothing else), and a piece that
 * starts or ends a word only from a trigram on (shorter words are not in
 * the vocabulary).
 */
export function wordPieces(term: string): Array<{ text: string; place: Place }> {
  const pieces: Array<{ text: string; place: Place }> = [];
  let start = 0;
  for (let i = 0; i <= term.length; i++) {
    if (i < term.length && inWord(term.charCodeAt(i))) continue;
    if (i > start) {
      const text = term.slice(start, i);
      const before = start > 0;
      const after = i < term.length;
      const place: Place = before && after ? 'whole' : before ? 'start' : after ? 'end' : 'inside';
      if (/^[a-z0-9]+$/.test(text) && (place === 'whole' || text.length >= TRIGRAM))
        pieces.push({ text, place });
    }
    start = i + 1;
  }
  return pieces;
}

/** The FTS5 expression over the word index matching the messages holding any of `words`. */
export function anyOf(words: readonly string[]): string {
  return `(${words.map((w) => `"${w}"`).join(' OR ')})`;
}

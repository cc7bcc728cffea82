/**
 * A view of a text that the scrubber searches besides the text itself, knowing where its
 * characters came from, so a hit in the view redacts the right span of the original:
 * `joinedLines` takes the line breaks out, so base64 or hex that a tool wrapped over several
 * lines (`base64` at 76 columns, `xxd -p` at 60) reads as one run.
 */

export interface TextView {
  text: string;
  /** The span of the viewed text that character `index` of this view stands for. */
  origin(index: number): { start: number; end: number };
}

export function wholeView(text: string): TextView {
  return { text, origin: (index) => ({ start: index, end: index + 1 }) };
}

/**
 * The view without line breaks; null when there are none. The joined text is made in one
 * replace; where its characters were is worked out only when a hit asks (hits are rare).
 */
export function joinedLines(view: TextView): TextView | null {
  const text = view.text;
  if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) return null;
  /** Per run of line breaks: the joined index of the character after it, and how many were removed up to there. */
  let after: Int32Array | null = null;
  let removed: Int32Array | null = null;
  const index = (): void => {
    const at: number[] = [];
    const total: number[] = [];
    let count = 0;
    const breaks = /[\r\n]+/g;
    for (let match = breaks.exec(text); match !== null; match = breaks.exec(text)) {
      count += match[0].length;
      at.push(match.index + match[0].length - count);
      total.push(count);
    }
    after = Int32Array.from(at);
    removed = Int32Array.from(total);
  };
  return {
    text: text.replace(/[\r\n]+/g, ''),
    origin(position) {
      if (after === null) index();
      // The last run of breaks that comes before this character.
      let low = 0;
      let high = after!.length - 1;
      let shift = 0;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (after![middle]! <= position) {
          shift = removed![middle]!;
          low = middle + 1;
        } else {
          high = middle - 1;
        }
      }
      return view.origin(position + shift);
    },
  };
}

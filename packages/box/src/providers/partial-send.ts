/**
 * The visible text of a `send_message` call whose JSON arguments are still arriving: the
 * `content` string so far (a top-level `content`, or `text.content` in the nested shape),
 * unescaped, up to the last complete character. `null` until a content string has begun.
 * A scan, not a parser: it only has to find one string in a prefix of an object.
 *
 * `SendDraft` reads the arguments as they arrive and decodes each character once, so a long
 * reply streamed in thousands of deltas costs time in proportion to its length (rescanning the
 * whole prefix on every delta took 2.6 s of CPU for a 4,000-word reply).
 */
export class SendDraft {
  private json = '';
  /** Where the content string's next undecoded character is; -1 until it began. */
  private next = -1;
  private closed = false;
  private text = '';

  /** Takes the next piece of the arguments; the text so far, or null before it began. */
  push(delta: string): string | null {
    this.json += delta;
    if (this.next === -1) {
      const match = /"content"\s*:\s*"/.exec(this.json);
      if (!match) return null;
      this.next = match.index + match[0].length;
    }
    if (!this.closed) this.decode();
    return this.text;
  }

  private decode(): void {
    const json = this.json;
    let i = this.next;
    let run = i;
    const flush = (end: number) => {
      if (end > run) this.text += json.slice(run, end);
    };
    while (i < json.length) {
      const ch = json[i]!;
      if (ch === '"') {
        flush(i);
        this.closed = true;
        this.next = i + 1;
        return;
      }
      if (ch !== '\\') {
        i++;
        continue;
      }
      flush(i);
      const escaped = json[i + 1];
      if (escaped === undefined) break; // an escape cut in half: wait for the rest
      if (escaped === 'u') {
        const hex = json.slice(i + 2, i + 6);
        if (hex.length < 4) break;
        this.text += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        this.text += ESCAPES[escaped] ?? escaped;
        i += 2;
      }
      run = i;
    }
    if (i >= json.length) flush(json.length);
    this.next = i >= json.length ? json.length : i;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };

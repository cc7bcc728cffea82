/**
 * The visible text of a `send_message` call whose JSON arguments are still arriving: the
 * `content` string so far (a top-level `content`, or `text.content` in the nested shape),
 * unescaped, up to the last complete character. `null` until a content string has begun.
 * A scan, not a parser: it only has to find one string in a prefix of an object.
 */
export function partialSendText(json: string): string | null {
  const match = /"content"\s*:\s*"/.exec(json);
  if (!match) return null;
  let out = '';
  for (let i = match.index + match[0].length; i < json.length; i++) {
    const ch = json[i]!;
    if (ch === '"') return out;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = json[i + 1];
    if (next === undefined) return out; // an escape cut in half: wait for the rest
    if (next === 'u') {
      const hex = json.slice(i + 2, i + 6);
      if (hex.length < 4) return out;
      out += String.fromCharCode(parseInt(hex, 16));
      i += 5;
      continue;
    }
    out += ESCAPES[next] ?? next;
    i += 1;
  }
  return out;
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };

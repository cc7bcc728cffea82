/**
 * Where a JSON text first goes wrong. V8's JSON.parse messages on Node 20 do
 * not always carry a position, and an error that cannot say where it is sends
 * the reader hunting, so this scanner walks the grammar (RFC 8259) and reports
 * the offset of the first bad character. It builds no values; it runs only
 * after JSON.parse has already failed.
 */

export interface JsonSyntaxError {
  /** 0-based offset into the text. */
  offset: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const describe = (at: number): string =>
    at >= text.length ? 'unexpected end of the document' : `unexpected ${JSON.stringify(text[at])}`;
  const fail = (what?: string): never => {
    throw new Stop(i, what ?? describe(i));
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = (): void => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in a string');
      if (c === 92) {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) fail('bad \\u escape');
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail('bad escape in a string');
      } else i++;
    }
  };
  const number = (): void => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m === null) return fail();
    i += m[0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`${describe(i)}, expected a key in quotes`);
        string();
        ws();
        if (text[i] !== ':') fail(`${describe(i)}, expected ":"`);
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail(`${describe(i)}, expected "," or "}"`);
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail(`${describe(i)}, expected "," or "]"`);
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`${describe(i)} after the document`);
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.offset, message: err.message };
    throw err;
  }
}

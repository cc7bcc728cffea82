import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SecretInFileError, scrubberFor, secretIn } from './scrub.ts';

const SECRET = 'sk-Test/Value+42?&"ok"';
const scrub = scrubberFor(new Map([['API_KEY', SECRET]]));
const bytes = Buffer.from(SECRET);

/** Each form the issue names, as a program in the sandbox could print it. */
const forms: Record<string, string> = {
  value: SECRET,
  'value upper-cased': SECRET.toUpperCase(),
  base64: bytes.toString('base64'),
  'base64 without padding': bytes.toString('base64').replace(/=+$/, ''),
  'base64 url-safe': bytes.toString('base64url'),
  'base64 at byte offset 1': Buffer.concat([Buffer.from('x'), bytes]).toString('base64'),
  'base64 at byte offset 2': Buffer.concat([Buffer.from('xy'), bytes]).toString('base64'),
  'base64 url-safe at offset 1': Buffer.concat([Buffer.from('x'), bytes]).toString('base64url'),
  'base64 url-safe at offset 2, padded': Buffer.concat([Buffer.from('xy'), bytes])
    .toString('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_'),
  hex: bytes.toString('hex'),
  'hex upper-case': bytes.toString('hex').toUpperCase(),
  'URL-encoded': encodeURIComponent(SECRET),
  'URL-encoded, lower-case escapes': encodeURIComponent(SECRET).toLowerCase(),
  'form-encoded': new URLSearchParams({ k: SECRET }).toString().slice(2),
  'every byte %-escaped': [...bytes].map((b) => `%${b.toString(16).toUpperCase()}`).join(''),
  'JSON-escaped': JSON.stringify(SECRET).slice(1, -1),
  'JSON with escaped slashes': JSON.stringify(SECRET).slice(1, -1).replace(/\//g, '\\/'),
  'JSON \\u escapes': [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  // Python's urllib.parse.quote() keeps "/" (its default safe set); quote_plus() does not.
  "Python's quote()": pythonQuote(SECRET, '/'),
  "Python's quote_plus()": pythonQuote(SECRET, ''),
  // PHP's json_encode escapes "/" as "\\/" and, by default, non-ASCII as \\uXXXX.
  "PHP's json_encode": phpJsonEncode(SECRET),
  'escapes mixed at random': `sk-T%65st\\/Val\\u0075e%2B42?%26\\"ok%22`,
};

/** urllib.parse.quote: every byte but letters, digits, `_.-~` and `safe` as %XX (upper-case). */
function pythonQuote(value: string, safe: string): string {
  return [...Buffer.from(value)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9_.~-]/.test(char) || safe.includes(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** PHP json_encode without flags: `\\/` for "/", `\\uXXXX` for anything outside ASCII. */
function phpJsonEncode(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/\//g, '\\/')
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Wraps `text` into lines of `width` characters, as `base64`, `openssl base64` and `xxd -p` print. */
function wrap(text: string, width: number, newline = '\n'): string {
  return (text.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(newline);
}

describe('scrubbing secrets in their common encodings', () => {
  for (const [name, form] of Object.entries(forms)) {
    it(`finds and replaces the ${name} form`, () => {
      const text = `before ${form} after`;
      expect(scrub.leaks(text)).toBe(true);
      const out = scrub.text(text);
      expect(out).toContain('[secret API_KEY redacted]');
      expect(out.startsWith('before ')).toBe(true);
      // What is left: the prefix's own characters, at most one mixed character on each side, padding.
      const left = out.replace('before ', '').replace(' after', '').replace('[secret API_KEY redacted]', '');
      expect(left.length).toBeLessThanOrEqual(4);
      expect(secretIn(scrub, Buffer.from(text))).toBe('API_KEY');
    });
  }

  it('finds base64 and hex wrapped the way the common tools print them, in text and in files', () => {
    const key = 'sk-live-0123456789abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOP';
    const wrapped = scrubberFor(new Map([['LONG_KEY', key]]));
    const pem = Buffer.concat([Buffer.from('-----header bytes-----'), Buffer.from(key), Buffer.from('tail')]);
    const cases: Record<string, string> = {
      'base64 (76 columns)': wrap(pem.toString('base64'), 76),
      'openssl base64 (64 columns)': wrap(pem.toString('base64'), 64),
      'xxd -p (60 columns)': wrap(pem.toString('hex'), 60),
      'xxd -p, CRLF': wrap(pem.toString('hex'), 60, '\r\n'),
      'base64 -w 20': wrap(Buffer.from(key).toString('base64'), 20),
    };
    for (const [name, printed] of Object.entries(cases)) {
      const output = `$ dump\n${printed}\n$ `;
      expect(wrapped.leaks(output), name).toBe(true);
      const clean = wrapped.text(output);
      expect(clean, name).toContain('[secret LONG_KEY redacted]');
      expect(clean.startsWith('$ dump\n'), name).toBe(true);
      expect(clean.endsWith('\n$ '), name).toBe(true);
      // Nothing of the value's own characters is left on any line.
      const rest = clean.replace(/\[secret LONG_KEY redacted\]/, '').replace(/[\r\n]/g, '');
      const whole = name.startsWith('xxd')
        ? Buffer.from(key).toString('hex')
        : Buffer.from(key).toString('base64');
      expect(rest.length, name).toBeLessThan(printed.length - whole.length + 16);
      for (let cut = 1; cut < output.length; cut += 7) {
        const scanner = wrapped.scanner();
        const hit =
          scanner.push(Buffer.from(output.slice(0, cut))) ?? scanner.push(Buffer.from(output.slice(cut)));
        expect(hit, `${name}, file cut at ${cut}`).toBe('LONG_KEY');
      }
    }
    expect(wrapped.text('line one\nline two\n')).toBe('line one\nline two\n');
  });

  it('finds base64 inside JSON that escapes its slashes', () => {
    const slashy = scrubberFor(new Map([['K', '\u00ff\u00ff\u00ffsecret??>>']]));
    const b64 = Buffer.from('\u00ff\u00ff\u00ffsecret??>>').toString('base64');
    expect(b64).toContain('/');
    const json = JSON.stringify({ blob: b64 }).replace(/\//g, '\\/');
    expect(slashy.text(json)).toBe('{"blob":"[secret K redacted]"}');
  });

  it('finds base64 of the secret inside any longer base64 text, at every offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20 }), fc.uint8Array({ maxLength: 20 }), (before, after) => {
        const encoded = Buffer.concat([before, bytes, after]).toString('base64');
        expect(scrub.leaks(encoded)).toBe(true);
        expect(scrub.leaks(Buffer.concat([before, bytes, after]).toString('base64url'))).toBe(true);
      }),
    );
  });

  it('replaces values everywhere, longest first, in nested objects and keys, and leaves other text alone', () => {
    const two = scrubberFor(
      new Map([
        ['A', 'abcd1234'],
        ['B', 'abcd1234-long'],
      ]),
    );
    expect(two.text('x abcd1234-long y abcd1234')).toBe('x [secret B redacted] y [secret A redacted]');
    expect(two.value({ out: ['abcd1234'], abcd1234: 1 })).toEqual({
      out: ['[secret A redacted]'],
      '[secret A redacted]': 1,
    });
    expect(two.text('nothing to see here')).toBe('nothing to see here');
  });

  it('finds a secret split across chunks of a file', () => {
    const file = Buffer.from(`header ${bytes.toString('hex')} trailer`);
    for (let cut = 1; cut < file.length; cut += 3) {
      const scanner = scrub.scanner();
      const first = scanner.push(file.subarray(0, cut));
      const second = scanner.push(file.subarray(cut));
      expect(first ?? second, `cut at ${cut}`).toBe('API_KEY');
    }
    expect(scrub.scanner().push(Buffer.from('a clean file'))).toBeNull();
  });

  it('finds a non-ASCII secret in text and in bytes', () => {
    const unicode = scrubberFor(new Map([['PASS', 'pässwörd-ü']]));
    expect(unicode.text('pw=pässwörd-ü')).toBe('pw=[secret PASS redacted]');
    const asciiJson = JSON.stringify('pässwörd-ü').replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    expect(unicode.text(`{"pw":${asciiJson}}`)).toBe('{"pw":"[secret PASS redacted]"}');
    expect(secretIn(unicode, Buffer.from(Buffer.from('pässwörd-ü').toString('base64')))).toBe('PASS');
  });

  it('never lets a draft show a prefix of a secret: every draft is the start of the final text', () => {
    const samples = [
      `The key is ${SECRET} and that is all.`,
      `hex ${bytes.toString('hex')} done`,
      `b64 ${bytes.toString('base64')} done`,
      `quoted ${pythonQuote(SECRET, '/')} done`,
      `json ${phpJsonEncode(SECRET)} done`,
      `wrapped\n${wrap(Buffer.concat([Buffer.from('xyz'), bytes]).toString('base64'), 8)}\ndone`,
    ];
    for (const sample of samples) {
      const final = scrub.text(sample);
      expect(final).toContain('[secret API_KEY redacted]');
      for (let end = 0; end <= sample.length; end++) {
        const shown = scrub.draft(sample.slice(0, end));
        expect(
          final.startsWith(shown),
          `${JSON.stringify(sample.slice(0, end))} showed ${JSON.stringify(shown)}`,
        ).toBe(true);
      }
    }
    // Text that cannot become a secret is shown as it comes.
    expect(scrub.draft('Hello there, how are you')).toBe('Hello there, how are you');
  });

  it('keeps every draft a start of the final text, whatever surrounds the secret', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }),
        fc.constantFrom(...Object.values(forms)),
        fc.string({ maxLength: 30 }),
        (before, form, after) => {
          const sample = `${before} ${form} ${after}`;
          const final = scrub.text(sample);
          for (let end = 0; end <= sample.length; end++) {
            expect(final.startsWith(scrub.draft(sample.slice(0, end)))).toBe(true);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('names the secret, never its value, when refusing a file', () => {
    const error = new SecretInFileError('report.txt', 'API_KEY');
    expect(error.message).toContain('report.txt contains the secret API_KEY');
    expect(error.message).not.toContain(SECRET);
  });
});

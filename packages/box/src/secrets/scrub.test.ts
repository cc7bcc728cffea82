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
};

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

  it('names the secret, never its value, when refusing a file', () => {
    const error = new SecretInFileError('report.txt', 'API_KEY');
    expect(error.message).toContain('report.txt contains the secret API_KEY');
    expect(error.message).not.toContain(SECRET);
  });
});

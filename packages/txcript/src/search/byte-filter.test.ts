import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mayHoldAll } from './byte-filter.ts';
import { parseQuery } from './query.ts';
import { byteNeedles } from './scan.ts';
import { checkFiles } from './scan-files.ts';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('the needles of a query', () => {
  it('are the lower-case ASCII pieces of the wanted exact terms, cut where JSON may escape', () => {
    const q = parseQuery('Deploy "dry/run" -prod paginaton~ x1 café 42137 Bash old_str');
    // -prod excluded, paginaton~ fuzzy, x1 short, Bash and old_str inside words a codec makes.
    expect(byteNeedles(q).sort()).toEqual(['42137', 'caf', 'deploy', 'dry', 'run']);
  });

  it('leave out what a harness says its codec may make up (a default tool name)', () => {
    const q = parseQuery('custom tool deploy');
    expect(byteNeedles(q).sort()).toEqual(['custom', 'deploy', 'tool']);
    expect(byteNeedles(q, ['custom_tool']).sort()).toEqual(['deploy']);
  });
});

describe('whether the bytes may hold the needles', () => {
  it('ignores ASCII case, and needs every needle', () => {
    const line = bytes('{"text":"Deploy the RELEASE to staging"}\n');
    expect(mayHoldAll(line, ['release', 'deploy'])).toBe(true);
    expect(mayHoldAll(line, ['release', 'prod'])).toBe(false);
  });

  it('counts the session title as held', () => {
    expect(mayHoldAll(bytes('{"text":"nothing here"}'), ['banner'], ['dark banner fix'])).toBe(true);
    // Whole-file: the title and the text may share the needles.
    expect(mayHoldAll(bytes('{"text":"the release"}'), ['banner', 'release'], ['dark banner fix'])).toBe(
      true,
    );
  });

  it('passes a file where a JSON escape of an ASCII letter could spell a needle', () => {
    expect(mayHoldAll(bytes('{"text":"\\u0072elease"}'), ['release'])).toBe(true);
    // An escape of a non-ASCII character hides no ASCII letter.
    expect(mayHoldAll(bytes('{"text":"\\u00e9l\\u00e8ve"}'), ['release'])).toBe(false);
  });

  it('passes a file with an ESC, whose escape sequence a codec may strip from inside a word', () => {
    const colored = bytes(
      '{"content":"<local-command-stdout>pre\\u001B[1mfix\\u001b[0m</local-command-stdout>"}',
    );
    expect(mayHoldAll(colored, ['prefix'])).toBe(true);
    expect(mayHoldAll(colored, ['prefix'], [], true)).toBe(true);
    expect(mayHoldAll(bytes('{"content":"pre\\u0007fix"}'), ['prefix'], [], true)).toBe(false);
  });

  it('passes a needle with a k where the text has a KELVIN SIGN (it lower-cases to k)', () => {
    const kelvin = bytes('{"text":"o\u212Ay then"}');
    expect(mayHoldAll(kelvin, ['oky'])).toBe(true);
    expect(mayHoldAll(kelvin, ['then', 'zzz'])).toBe(false);
  });

  it('finds non-ASCII neighbours of an ASCII needle as they are written', () => {
    expect(mayHoldAll(bytes('{"text":"CAFÉ crème"}'), ['caf'])).toBe(true);
  });
});

describe('line by line (a harness whose messages are each one line)', () => {
  const file = bytes(
    [
      '{"text":"deploy the release"}',
      '{"text":"the staging banner"}',
      '{"text":"Deploy again, then a banner"}',
      '{"text":"last release"}',
    ].join('\n'),
  );

  it('needs one line to hold every needle', () => {
    expect(mayHoldAll(file, ['deploy', 'release'], [], true)).toBe(true);
    expect(mayHoldAll(file, ['deploy', 'banner'], [], true)).toBe(true);
    // In the file, never in one line: the whole-file check passes it, the line check does not.
    expect(mayHoldAll(file, ['staging', 'release'])).toBe(true);
    expect(mayHoldAll(file, ['staging', 'release'], [], true)).toBe(false);
    expect(mayHoldAll(file, ['staging', 'again'], [], true)).toBe(false);
    // The longest needle's last line, with no newline after it.
    expect(mayHoldAll(file, ['last', 'release'], [], true)).toBe(true);
  });

  it('takes a title holding every needle (a row of its own), and a KELVIN SIGN or an ASCII escape anywhere', () => {
    expect(mayHoldAll(file, ['staging', 'hotfix'], ['other', 'hotfix for staging'], true)).toBe(true);
    // A title's words and a line's do not make one row.
    expect(mayHoldAll(file, ['staging', 'hotfix'], ['hotfix'], true)).toBe(false);
    expect(mayHoldAll(file, ['staging', 'release'], ['staging', 'release'], true)).toBe(false);
    const kelvin = bytes('{"text":"o\u212Ay"}\n{"text":"then"}');
    expect(mayHoldAll(kelvin, ['then', 'oky'], [], true)).toBe(true);
    expect(
      mayHoldAll(bytes('{"text":"\\u0072elease"}\n{"text":"staging"}'), ['release', 'staging'], [], true),
    ).toBe(true);
  });
});

describe('checking many files over worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'txcript-scan-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const files = Array.from({ length: 60 }, (_, i) => {
    const path = join(dir, `s${i}.jsonl`);
    writeFileSync(
      path,
      `{"text":"${i % 7 === 0 ? 'the Zanzibarite banner' : 'filler text'} ${'x'.repeat(2000)}"}\n{"text":"a banner"}\n`,
    );
    return { path, bytes: 2100, titles: [] };
  });
  const expected = files.map((_, i) => i % 7 === 0);

  it('gives the same verdicts with workers as without', async () => {
    expect(await checkFiles(files, ['zanzibarite'], { workers: 0 })).toEqual(expected);
    expect(await checkFiles(files, ['zanzibarite'], { workers: 2 })).toEqual(expected);
    expect(await checkFiles(files, ['zanzibarite'], { workers: 2, claimHere: false })).toEqual(expected);
  });

  it('checks line by line where a file asks, on this thread and in the workers', async () => {
    // `banner` and `filler` are in one file (i % 7 !== 0), never in one line of it.
    const lines = files.map((f, i) => ({ ...f, perLine: i % 2 === 0 }));
    const apart = files.map((_, i) => i % 2 !== 0 && i % 7 !== 0);
    for (const options of [{ workers: 0 }, { workers: 2, claimHere: false }]) {
      expect(await checkFiles(lines, ['banner', 'zanzibarite'], options)).toEqual(expected);
      expect(await checkFiles(lines, ['banner', 'filler'], options)).toEqual(apart);
    }
  });

  it('reports a file that cannot be read, and decides the others, when a worker cannot start', async () => {
    const gone = { path: join(dir, 'gone.jsonl'), bytes: 10, titles: [] };
    const verdicts = await checkFiles([...files, gone], ['zanzibarite'], {
      workers: 2,
      url: new URL('./no-such-worker.ts', import.meta.url),
    });
    expect(verdicts.slice(0, -1)).toEqual(expected);
    expect(verdicts.at(-1)).toBeInstanceOf(Error);
  });
});

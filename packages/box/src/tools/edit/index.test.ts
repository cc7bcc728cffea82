import { chmod, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scrubberFor } from '../../secrets/scrub.ts';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { editTool } from './index.ts';

const box = useToolSandbox();

const file = () => path.join(box.sandbox, 'a.txt');

describe('edit', () => {
  it('replaces the one match, keeps the mode, and says what changed', async () => {
    await writeFile(file(), 'one\ntwo\nthree\nfour\nfive\nsix\n');
    await chmod(file(), 0o750);
    const out = await editTool.run({ path: 'a.txt', old_string: 'three', new_string: 'THREE\n3' }, box.ctx);
    expect(await readFile(file(), 'utf8')).toBe('one\ntwo\nTHREE\n3\nfour\nfive\nsix\n');
    expect((await stat(file())).mode & 0o777).toBe(0o750);
    const success = successOf(out.envelope);
    expect(success).toMatchObject({ path: 'a.txt', replacements: 1, linesAdded: 2, linesRemoved: 1 });
    expect(success.diffString).toBe(
      ['@@ -1,5 +1,6 @@', ' one', ' two', '-three', '+THREE', '+3', ' four', ' five'].join('\n'),
    );
    expect(out.summary).toBe('a.txt: 1 replacement (+2 -1)');
  });

  it('refuses zero matches with the count and what to do, and leaves the file alone', async () => {
    await writeFile(file(), 'alpha\n');
    const out = await editTool.run({ path: 'a.txt', old_string: 'beta', new_string: 'gamma' }, box.ctx);
    expect(errorText(out.envelope)).toMatch(/not found in a\.txt \(0 matches\).*read the file again/);
    expect(await readFile(file(), 'utf8')).toBe('alpha\n');
  });

  it('refuses two matches without replace_all (count, lines, way forward); replaces both with it', async () => {
    await writeFile(file(), 'x = 1\ny = 2\nx = 1\n');
    const refused = await editTool.run({ path: 'a.txt', old_string: 'x = 1', new_string: 'x = 9' }, box.ctx);
    expect(errorText(refused.envelope)).toContain('occurs 2 times in a.txt (at lines 1, 3)');
    expect(errorText(refused.envelope)).toContain('set replace_all to true');
    expect(await readFile(file(), 'utf8')).toBe('x = 1\ny = 2\nx = 1\n');

    const out = await editTool.run(
      { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 9', replace_all: true },
      box.ctx,
    );
    expect(await readFile(file(), 'utf8')).toBe('x = 9\ny = 2\nx = 9\n');
    expect(successOf(out.envelope)).toMatchObject({ replacements: 2, linesAdded: 2, linesRemoved: 2 });
    expect(successOf(out.envelope).diffString).toBe(
      [
        '@@ -1,3 +1,3 @@',
        '-x = 1',
        '+x = 9',
        ' y = 2',
        ' x = 1',
        '@@ -1,3 +1,3 @@',
        ' x = 1',
        ' y = 2',
        '-x = 1',
        '+x = 9',
      ].join('\n'),
    );
  });

  it('keeps bytes that are not UTF-8 as they were, and counts lines and columns in bytes of a multibyte file', async () => {
    // Latin-1 "café" on line 1 (0xE9 is not UTF-8), then UTF-8 text with multibyte characters.
    const latin = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);
    await writeFile(file(), Buffer.concat([latin, Buffer.from('naïve → ok\nend\n')]));
    const out = await editTool.run({ path: 'a.txt', old_string: '→ ok', new_string: '→ fine' }, box.ctx);
    expect(await readFile(file())).toEqual(Buffer.concat([latin, Buffer.from('naïve → fine\nend\n')]));
    expect(successOf(out.envelope).diffString).toBe(
      ['@@ -1,3 +1,3 @@', ' caf\uFFFD', '-naïve → ok', '+naïve → fine', ' end'].join('\n'),
    );
  });

  it('shows the context of a file that starts with an empty line once', async () => {
    await writeFile(file(), '\nsecond\nthird\n');
    const out = await editTool.run({ path: 'a.txt', old_string: 'second', new_string: 'SECOND' }, box.ctx);
    expect(successOf(out.envelope).diffString).toBe(
      ['@@ -1,3 +1,3 @@', ' ', '-second', '+SECOND', ' third'].join('\n'),
    );
  });

  it('never edits through a planted link', async () => {
    const outside = path.join(box.root, 'outside.txt');
    await writeFile(outside, 'secret = 1\n');
    await symlink(outside, path.join(box.sandbox, 'link.txt'));
    const out = await editTool.run({ path: 'link.txt', old_string: '1', new_string: '2' }, box.ctx);
    expect(errorText(out.envelope)).toContain('symbolic link');
    expect(await readFile(outside, 'utf8')).toBe('secret = 1\n');
  });

  it('refuses a binary file and a path outside the sandbox', async () => {
    await writeFile(file(), Buffer.from([0x61, 0, 0x62]));
    expect(
      errorText((await editTool.run({ path: 'a.txt', old_string: 'a', new_string: 'c' }, box.ctx)).envelope),
    ).toContain('binary');
    expect(
      errorText((await editTool.run({ path: '../x', old_string: 'a', new_string: 'c' }, box.ctx)).envelope),
    ).toContain('outside your sandbox');
  });

  it('scrubs secrets from the diff', async () => {
    await writeFile(file(), 'token=old\n');
    const ctx = { ...box.ctx, scrub: scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']])) };
    const out = await editTool.run({ path: 'a.txt', old_string: 'old', new_string: 'tok-0123456789' }, ctx);
    expect(JSON.stringify(out)).not.toContain('tok-0123456789');
    expect(await readFile(file(), 'utf8')).toBe('token=tok-0123456789\n');
  });
});

import { symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorText, useToolSandbox } from '../test-context.ts';
import { readTool } from './index.ts';

const box = useToolSandbox();

describe('read', () => {
  it('reads a whole file, or a line window', async () => {
    await writeFile(path.join(box.sandbox, 'a.txt'), 'one\ntwo\nthree');
    expect((await readTool.run({ path: 'a.txt' }, box.ctx)).envelope).toEqual({
      success: { content: 'one\ntwo\nthree' },
    });
    expect((await readTool.run({ path: 'a.txt', offset: 2, limit: 1 }, box.ctx)).envelope).toEqual({
      success: { content: 'two' },
    });
  });

  it('reads a window near the start of a file too big to hold in memory without reading the rest', async () => {
    const big = path.join(box.sandbox, 'huge.log');
    await writeFile(big, 'first\nsecond\nthird\n');
    await truncate(big, 3 * 1024 ** 3); // sparse: 3 GiB on paper, a few bytes on disk
    expect((await readTool.run({ path: 'huge.log', offset: 2, limit: 1 }, box.ctx)).envelope).toEqual({
      success: { content: 'second' },
    });
    const whole = await readTool.run({ path: 'huge.log' }, box.ctx);
    expect(errorText(whole.envelope)).toMatch(/more than the 262144-byte read limit/);
    const tooWide = await readTool.run({ path: 'huge.log', offset: 3 }, box.ctx);
    expect(errorText(tooWide.envelope)).toMatch(/window of huge\.log is over 262144 bytes/);
  });

  it('refuses paths that leave the sandbox, by .. or by symlink', async () => {
    await writeFile(path.join(box.root, 'outside.txt'), 'secret');
    await symlink(path.join(box.root, 'outside.txt'), path.join(box.sandbox, 'link.txt'));
    for (const p of ['../outside.txt', path.join(box.root, 'outside.txt')]) {
      const out = await readTool.run({ path: p }, box.ctx);
      expect(errorText(out.envelope), p).toMatch(/outside/);
    }
    expect(errorText((await readTool.run({ path: 'link.txt' }, box.ctx)).envelope)).toMatch(/symbolic link/);
  });

  it('reports a missing file as an error envelope with the real key, errorMessage', async () => {
    const { envelope } = await readTool.run({ path: 'nope.txt' }, box.ctx);
    expect(envelope).toEqual({ error: { errorMessage: expect.stringContaining('No file') as unknown } });
  });
});

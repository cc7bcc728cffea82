import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorText, readIfExists, useToolSandbox } from '../test-context.ts';
import { writeTool } from './index.ts';

const box = useToolSandbox();

describe('write', () => {
  it('writes a file, its parent folders created', async () => {
    const wrote = await writeTool.run({ path: 'notes/a.txt', content: 'one\ntwo\nthree' }, box.ctx);
    expect(wrote.envelope).toEqual({ success: { path: 'notes/a.txt', fileSize: 13 } });
    expect(await readFile(path.join(box.sandbox, 'notes/a.txt'), 'utf8')).toBe('one\ntwo\nthree');
  });

  it('never writes through a symbolic link to a folder outside the sandbox', async () => {
    await symlink(box.root, path.join(box.sandbox, 'dirlink'));
    const out = await writeTool.run({ path: 'dirlink/new.txt', content: 'x' }, box.ctx);
    expect(errorText(out.envelope)).toMatch(/inside a symbolic link \(dirlink\)/);
    expect(await readIfExists(path.join(box.root, 'new.txt'))).toBeNull();
  });
});

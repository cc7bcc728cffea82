import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { lsTool } from './index.ts';

const box = useToolSandbox();

it('lists entries with their type and size; a planted link is listed as a link, never followed', async () => {
  await mkdir(path.join(box.sandbox, 'src'));
  await writeFile(path.join(box.sandbox, 'a.txt'), 'hello');
  await mkdir(path.join(box.root, 'outside'));
  await writeFile(path.join(box.root, 'outside', 'secret.txt'), 'x');
  await symlink(path.join(box.root, 'outside'), path.join(box.sandbox, 'out'));
  const out = await lsTool.run({}, box.ctx);
  const root = successOf(out.envelope).directoryTreeRoot as Record<string, unknown>;
  expect(root.absPath).toBe(box.sandbox);
  expect(root.childrenDirs).toEqual([
    {
      absPath: path.join(box.sandbox, 'src'),
      childrenDirs: [],
      childrenFiles: [],
      childrenWereProcessed: false,
    },
  ]);
  expect(root.childrenFiles).toEqual([
    { name: 'a.txt', size: 5 },
    { name: 'out', size: expect.any(Number) as number, type: 'symbolic link' },
  ]);
  expect(lsTool.modelOutput!(out.envelope)).toEqual({
    type: 'text',
    value: `${box.sandbox}:\nsrc/  folder\na.txt  file, 5 bytes\nout  symbolic link (not followed)`,
  });
  // Listing through the link is refused.
  expect(errorText((await lsTool.run({ path: 'out' }, box.ctx)).envelope)).toContain('symbolic link');
});

it('refuses a folder outside the sandbox and one that does not exist', async () => {
  expect(errorText((await lsTool.run({ path: '..' }, box.ctx)).envelope)).toContain('outside your sandbox');
  expect(errorText((await lsTool.run({ path: 'nope' }, box.ctx)).envelope)).toContain('No file at "nope"');
});

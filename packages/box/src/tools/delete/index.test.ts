import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { successOf, useToolSandbox } from '../test-context.ts';
import { deleteTool } from './index.ts';

const box = useToolSandbox();

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

function errorOf(envelope: unknown): { path: string; error: string } {
  return (envelope as { error: { path: string; error: string } }).error;
}

it('deletes one file and one empty folder', async () => {
  await writeFile(path.join(box.sandbox, 'a.txt'), 'x');
  await mkdir(path.join(box.sandbox, 'empty'));
  const out = await deleteTool.run({ path: 'a.txt' }, box.ctx);
  expect(successOf(out.envelope)).toEqual({ path: 'a.txt', message: 'Deleted the file a.txt.' });
  expect(await exists(path.join(box.sandbox, 'a.txt'))).toBe(false);
  await deleteTool.run({ path: 'empty' }, box.ctx);
  expect(await exists(path.join(box.sandbox, 'empty'))).toBe(false);
});

it('refuses a folder that is not empty, the sandbox itself, and paths outside', async () => {
  await mkdir(path.join(box.sandbox, 'full'));
  await writeFile(path.join(box.sandbox, 'full', 'b.txt'), 'x');
  expect(errorOf((await deleteTool.run({ path: 'full' }, box.ctx)).envelope)).toEqual({
    path: 'full',
    error: expect.stringContaining('not empty') as string,
  });
  expect(await exists(path.join(box.sandbox, 'full', 'b.txt'))).toBe(true);
  expect(errorOf((await deleteTool.run({ path: '.' }, box.ctx)).envelope).error).toContain(
    'sandbox folder itself',
  );
  expect(errorOf((await deleteTool.run({ path: box.sandbox }, box.ctx)).envelope).error).toContain(
    'sandbox folder itself',
  );
  await writeFile(path.join(box.root, 'victim.txt'), 'keep');
  expect(errorOf((await deleteTool.run({ path: '../victim.txt' }, box.ctx)).envelope).error).toContain(
    'outside',
  );
  expect(await exists(path.join(box.root, 'victim.txt'))).toBe(true);
});

it('never deletes through a planted link, nor the link as if it were a file', async () => {
  await mkdir(path.join(box.root, 'outside'));
  await writeFile(path.join(box.root, 'outside', 'victim.txt'), 'keep');
  await symlink(path.join(box.root, 'outside'), path.join(box.sandbox, 'dir-link'));
  await symlink(path.join(box.root, 'outside', 'victim.txt'), path.join(box.sandbox, 'file-link'));
  expect(errorOf((await deleteTool.run({ path: 'dir-link/victim.txt' }, box.ctx)).envelope).error).toContain(
    'symbolic link',
  );
  expect(errorOf((await deleteTool.run({ path: 'file-link' }, box.ctx)).envelope).error).toContain(
    'symbolic link',
  );
  expect(await readFile(path.join(box.root, 'outside', 'victim.txt'), 'utf8')).toBe('keep');
  expect(await exists(path.join(box.sandbox, 'file-link'))).toBe(true);
});

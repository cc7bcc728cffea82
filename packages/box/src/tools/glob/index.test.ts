import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { globTool } from './index.ts';

const box = useToolSandbox();

async function file(rel: string, mtimeSeconds: number): Promise<void> {
  const at = path.join(box.sandbox, rel);
  await mkdir(path.dirname(at), { recursive: true });
  await writeFile(at, rel);
  await utimes(at, mtimeSeconds, mtimeSeconds);
}

it('finds matching paths newest first; a planted link to a folder is not walked into', async () => {
  await file('old.ts', 1000);
  await file('src/new.ts', 3000);
  await file('src/deep/mid.ts', 2000);
  await file('src/readme.md', 4000);
  await mkdir(path.join(box.root, 'outside'));
  await writeFile(path.join(box.root, 'outside', 'leak.ts'), 'x');
  await symlink(path.join(box.root, 'outside'), path.join(box.sandbox, 'out'));
  const out = await globTool.run({ pattern: '**/*.ts' }, box.ctx);
  expect(successOf(out.envelope)).toMatchObject({
    pattern: '**/*.ts',
    path: box.sandbox,
    files: ['src/new.ts', 'src/deep/mid.ts', 'old.ts'],
    totalFiles: 3,
    clientTruncated: false,
  });
  expect(globTool.modelOutput!(out.envelope)).toEqual({
    type: 'text',
    value: 'src/new.ts\nsrc/deep/mid.ts\nold.ts',
  });
  // Inside a folder, and through the link: refused.
  const inSrc = await globTool.run({ pattern: '*.md', path: 'src' }, box.ctx);
  expect(successOf(inSrc.envelope).files).toEqual(['readme.md']);
  expect(errorText((await globTool.run({ pattern: '*', path: 'out' }, box.ctx)).envelope)).toContain(
    'symbolic link',
  );
});

it('caps the list and says how many it left out', async () => {
  for (let i = 0; i < 205; i++) await file(`f${i}.txt`, 1000 + i);
  const out = await globTool.run({ pattern: '*.txt' }, box.ctx);
  const success = successOf(out.envelope);
  expect((success.files as string[]).length).toBe(200);
  expect((success.files as string[])[0]).toBe('f204.txt');
  expect(success).toMatchObject({ totalFiles: 205, clientTruncated: true });
  const text = globTool.modelOutput!(out.envelope);
  expect(text && 'value' in text ? text.value : '').toContain('… 5 more matches not shown');
});

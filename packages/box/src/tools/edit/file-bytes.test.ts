import { appendFile, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeInSandbox } from '../../sandbox/paths.ts';
import { useToolSandbox } from '../test-context.ts';
import { readFileBytes } from './file-bytes.ts';
import { editTool } from './index.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-file-bytes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readFileBytes', () => {
  it('reads a file that grew after it was opened whole, so an edit never cuts its end off', async () => {
    const file = path.join(dir, 'growing.log');
    await writeFile(file, 'first line\n');
    const handle = await open(file, 'r');
    try {
      const { size } = await handle.stat();
      await appendFile(file, 'a line written meanwhile\n');
      const read = await readFileBytes(handle, size);
      expect(read.bytes.toString()).toBe('first line\na line written meanwhile\n');
      read.release();
    } finally {
      await handle.close();
    }
  });

  it('gives a reused buffer only the new file’s bytes (nothing of a longer file read before)', async () => {
    const long = path.join(dir, 'long.txt');
    const short = path.join(dir, 'short.txt');
    await writeFile(long, 'L'.repeat(10_000));
    await writeFile(short, 'short');
    for (const [file, expected] of [
      [long, 'L'.repeat(10_000)],
      [short, 'short'],
      [long, 'L'.repeat(10_000)],
    ] as const) {
      const handle = await open(file, 'r');
      try {
        const read = await readFileBytes(handle, (await handle.stat()).size);
        expect(read.bytes.toString()).toBe(expected);
        read.release();
      } finally {
        await handle.close();
      }
    }
  });
});

const box = useToolSandbox();

describe('writing a sandbox file from chunks', () => {
  it('writes the chunks in order, empty ones included, as one file', async () => {
    const chunks = [
      Buffer.from('head '),
      Buffer.alloc(0),
      Buffer.from('x'.repeat(200_000)),
      Buffer.from(' tail'),
    ];
    await writeInSandbox(box.sandbox, 'joined.txt', chunks);
    expect(await readFile(path.join(box.sandbox, 'joined.txt'), 'utf8')).toBe(
      `head ${'x'.repeat(200_000)} tail`,
    );
  });

  it('edits of files of different sizes one after another each keep their own bytes', async () => {
    await writeFile(path.join(box.sandbox, 'big.txt'), `${'a'.repeat(300_000)}MARK${'b'.repeat(300_000)}`);
    await writeFile(path.join(box.sandbox, 'small.txt'), 'one MARK two');
    await editTool.run({ path: 'big.txt', old_string: 'MARK', new_string: 'DONE' }, box.ctx);
    await editTool.run({ path: 'small.txt', old_string: 'MARK', new_string: 'X' }, box.ctx);
    expect(await readFile(path.join(box.sandbox, 'small.txt'), 'utf8')).toBe('one X two');
    expect(await readFile(path.join(box.sandbox, 'big.txt'), 'utf8')).toBe(
      `${'a'.repeat(300_000)}DONE${'b'.repeat(300_000)}`,
    );
  });

  it('writes a replace_all of 5,000 places (10,001 chunks, more than one writev takes) whole', async () => {
    await writeFile(path.join(box.sandbox, 'many.txt'), 'x = 1;\n'.repeat(5000));
    await editTool.run({ path: 'many.txt', old_string: '1', new_string: '22', replace_all: true }, box.ctx);
    expect(await readFile(path.join(box.sandbox, 'many.txt'), 'utf8')).toBe('x = 22;\n'.repeat(5000));
  });
});

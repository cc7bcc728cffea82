/** When `npm start` rebuilds the web UI: missing or older than any source file. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { webBuildNeed } from './web-build.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.promises.rm(dir, { recursive: true, force: true });
});

async function webPackage(): Promise<string> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-webpkg-'));
  dirs.push(dir);
  await fs.promises.mkdir(path.join(dir, 'src'));
  await fs.promises.writeFile(path.join(dir, 'src', 'main.tsx'), 'export {};\n');
  return dir;
}

function touch(file: string, secondsAgo: number): void {
  const when = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(file, when, when);
}

describe('webBuildNeed', () => {
  it('is missing without dist/index.html', async () => {
    expect(webBuildNeed(await webPackage())).toBe('missing');
  });

  it('is stale when a source is newer than the build, fresh otherwise; node_modules does not count', async () => {
    const dir = await webPackage();
    await fs.promises.mkdir(path.join(dir, 'dist'));
    await fs.promises.writeFile(path.join(dir, 'dist', 'index.html'), '<!doctype html>');
    await fs.promises.mkdir(path.join(dir, 'node_modules'));
    await fs.promises.writeFile(path.join(dir, 'node_modules', 'dep.js'), '');
    touch(path.join(dir, 'src', 'main.tsx'), 60);
    touch(path.join(dir, 'dist', 'index.html'), 30);
    expect(webBuildNeed(dir)).toBe('fresh');
    touch(path.join(dir, 'src', 'main.tsx'), 0);
    expect(webBuildNeed(dir)).toBe('stale');
  });
});

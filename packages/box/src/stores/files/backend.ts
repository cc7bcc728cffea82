/** For the files backend's contract runs: a temp folder per test, removed after it. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Backend, BackendHarness } from '../contract.ts';

export function filesBackend<S>(open: (dir: string) => BackendHarness<S>): Backend<S> {
  let dir = '';
  return {
    async setUp() {
      dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-store-'));
      return open(dir);
    },
    async tearDown() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

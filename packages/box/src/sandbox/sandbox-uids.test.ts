/**
 * The agents' uids: the range the box owns, and the machine-wide registry on
 * real folders and a real SQLite file. Owning files by another uid takes root,
 * which is how the box runs when it gives each agent a uid (docs/sandbox.md);
 * the range rules are checked either way.
 */
import { execFile, spawn } from 'node:child_process';
import { cp, lstat, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { processesOfUids } from './leftovers.ts';
import {
  chooseUidRange,
  chownTree,
  DEFAULT_UID_RANGE,
  SandboxUids,
  UidRangeError,
  type UidRange,
} from './sandbox-uids.ts';

const asRoot = process.getuid?.() === 0;
const UID_CLAIMER = fileURLToPath(new URL('../testing/uid-claimer.ts', import.meta.url));
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the uid range', () => {
  const none = { subuid: '', passwd: 'root:x:0:0::/root:/bin/bash\n', group: 'root:x:0:\n' };

  it('is the default one without a sendbox line in /etc/subuid, and the sendbox line otherwise', () => {
    expect(chooseUidRange(none)).toEqual(DEFAULT_UID_RANGE);
    const range = chooseUidRange({ ...none, subuid: 'alice:100000:65536\nsendbox:3000000:1000\n' });
    expect(range).toMatchObject({ first: 3_000_000, count: 1000 });
    expect(range.source).toContain('/etc/subuid (sendbox:3000000:1000)');
  });

  it('is refused when a user, a group or another subordinate range overlaps it, saying how to fix it', () => {
    const inside = DEFAULT_UID_RANGE.first + 7;
    const cases = [
      { ...none, passwd: `${none.passwd}svc:x:${inside}:100::/:/bin/false\n`, says: /id \d+ of "svc"/ },
      { ...none, group: `${none.group}team:x:${inside}:\n`, says: /id \d+ of "team"/ },
      { ...none, subuid: `bob:${inside - 10}:65536\n`, says: /overlaps \/etc\/subuid's range for "bob"/ },
      { ...none, subuid: 'sendbox:1000:65536\n', says: /between 65536 and 2147483647/ },
      { ...none, subuid: 'sendbox:3000000:1\n', says: /at least two uids/ },
      { ...none, subuid: `sendbox:${2 ** 31 - 10}:65536\n`, says: /between 65536 and 2147483647/ },
    ];
    for (const { says, ...files } of cases) {
      const error = (() => {
        try {
          chooseUidRange(files);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(UidRangeError);
      expect((error as UidRangeError).message).toMatch(says);
      expect((error as UidRangeError).fix).toContain('sendbox:<first uid>:<count>');
    }
  });
});

describe.runIf(asRoot)('the registry (as root)', () => {
  /** A private registry and a small range far from the real one. */
  async function scene(count: number) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-uids-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const first = 1_990_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
    const range: UidRange = { first, count, source: 'the test range' };
    const registry = path.join(dir, 'registry', 'uids.db');
    const open = () => {
      const uids = SandboxUids.open(range, registry);
      cleanups.push(() => uids.close());
      return uids;
    };
    const folder = async (name: string, files: Record<string, string> = {}) => {
      const sandbox = path.join(dir, 'sandboxes', name);
      await mkdir(sandbox, { recursive: true, mode: 0o700 });
      for (const [file, text] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(sandbox, file)), { recursive: true });
        await writeFile(path.join(sandbox, file), text);
      }
      return sandbox;
    };
    return { dir, first, open, folder, registry };
  }
  const ownerOf = async (file: string) => (await lstat(file)).uid;

  it('gives each folder its own uid, hands the folder over, and keeps it across a restart', async () => {
    const { first, open, folder, registry } = await scene(8);
    const a = await folder('a', { 'notes/todo.txt': 'x' });
    const b = await folder('b');
    const uids = open();
    const ua = await uids.assign(a);
    const ub = await uids.assign(b);
    expect([ua, ub]).toEqual([first, first + 1]);
    expect(await ownerOf(a)).toBe(ua);
    expect(await ownerOf(path.join(a, 'notes'))).toBe(ua);
    expect(await ownerOf(path.join(a, 'notes', 'todo.txt'))).toBe(ua);
    expect((await lstat(path.join(a, 'notes', 'todo.txt'))).gid).toBe(ua);
    expect(await uids.assign(a)).toBe(ua);
    uids.close();
    cleanups.pop();
    expect((await lstat(path.dirname(registry))).mode & 0o777).toBe(0o700);
    const again = open();
    expect(await again.assign(b)).toBe(ub);
    expect(await again.assign(a)).toBe(ua);
    expect(again.uidOf(a)).toBe(ua);
  });

  it("never gives a deleted agent's uid to a new agent while fresh ones remain; then reuses the longest free", async () => {
    const { first, open, folder } = await scene(4);
    const uids = open();
    const a = await folder('a', { 'secret.txt': 'of agent a' });
    expect(await uids.assign(a)).toBe(first);
    expect(await uids.assign(await folder('b'))).toBe(first + 1);
    await rm(a, { recursive: true });
    await uids.release(a);
    expect(uids.uidOf(a)).toBeUndefined();
    expect(await uids.assign(await folder('c'))).toBe(first + 2);
    // The range is used up: the released uid goes to the next agent, whose folder is new and its own.
    const d = await folder('d');
    expect(await uids.assign(d)).toBe(first);
    expect(await ownerOf(d)).toBe(first);
    await expect(uids.assign(await folder('e'))).rejects.toThrow(
      /all 3 agent uids of the test range belong to existing agents' sandbox folders/,
    );
  });

  it('reuses the uid of a folder removed without deleting its agent only after killing its processes', async () => {
    const { first, open, folder } = await scene(2);
    const uids = open();
    const gone = await folder('gone');
    expect(await uids.assign(gone)).toBe(first);
    // Left running under that uid, then its data dir removed by hand.
    const leftover = spawn(
      'setpriv',
      [`--reuid=${first}`, `--regid=${first}`, '--clear-groups', 'sleep', '60'],
      {
        stdio: 'ignore',
      },
    );
    cleanups.push(() => void leftover.kill('SIGKILL'));
    await waitFor(async () => (await processesOfUids(new Set([first]))).length === 1);
    await rm(gone, { recursive: true });
    const next = await folder('next');
    expect(await uids.assign(next)).toBe(first);
    await waitFor(async () => (await processesOfUids(new Set([first]))).length === 0);
    expect(leftover.signalCode ?? (await new Promise((r) => leftover.once('exit', (_c, s) => r(s))))).toBe(
      'SIGKILL',
    );
  });

  it('keeps the uid of a moved folder, and gives a copied folder a uid of its own', async () => {
    const { dir, first, open, folder } = await scene(4);
    const uids = open();
    const a = await folder('a', { 'f.txt': 'a' });
    expect(await uids.assign(a)).toBe(first);
    const moved = path.join(dir, 'moved-data-dir');
    await mkdir(moved);
    await rename(a, path.join(moved, 'a'));
    expect(await uids.assign(path.join(moved, 'a'))).toBe(first);
    // A copy keeps the owner (cp -a) while the original still holds the uid: the copy gets another.
    const copy = path.join(dir, 'copy');
    await cp(path.join(moved, 'a'), copy, { recursive: true });
    await chownTree(copy, first);
    const copyUid = await uids.assign(copy);
    expect(copyUid).not.toBe(first);
    expect(await ownerOf(path.join(copy, 'f.txt'))).toBe(copyUid);
    expect(await ownerOf(path.join(moved, 'a', 'f.txt'))).toBe(first);
  });

  it('two registries on one file (two boxes) never give one uid to two folders', async () => {
    const { first, open, folder } = await scene(41);
    const one = open();
    const two = open();
    const folders = await Promise.all(Array.from({ length: 40 }, (_, i) => folder(`f${i}`)));
    const given = await Promise.all(folders.map((f, i) => (i % 2 ? one : two).assign(f)));
    expect(new Set(given).size).toBe(40);
    expect(Math.min(...given)).toBe(first);
  });

  it('two box processes claiming at once on one registry never give one uid to two folders', async () => {
    const { first, registry, folder } = await scene(301);
    const range: UidRange = { first, count: 301, source: 'the test range' };
    // Both start claiming at the same moment, once loaded (a loaded machine takes a while to start node).
    const startAt = Date.now() + 4000;
    const claim = async (prefix: string) => {
      const folders = await Promise.all(Array.from({ length: 150 }, (_, i) => folder(`${prefix}${i}`)));
      const args = JSON.stringify({ range, registry, folders, startAt });
      return promisify(execFile)(process.execPath, ['--import', 'tsx', UID_CLAIMER, args]);
    };
    // The registry file exists before either starts, as on a machine that ran a box before.
    SandboxUids.open(range, registry).close();
    const results = await Promise.all([claim('p'), claim('q')]);
    const given = results.flatMap(({ stdout }) => JSON.parse(stdout) as number[]);
    expect(given).toHaveLength(300);
    expect(new Set(given).size).toBe(300);
  }, 60_000);
});

async function waitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

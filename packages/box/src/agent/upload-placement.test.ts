/**
 * Placing recorded uploads into a sandbox that lacks them (upload-placement.ts), on real folders:
 * the bytes must hash to the recorded SHA-256, nothing lands outside the sandbox, and a path that
 * holds the upload already is left alone.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { placeUploads, uploadInSandbox, uploadsAfter, type RecordedUpload } from './upload-placement.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { uploadFinder } from '../context/upload-images.ts';
import { revisedUploads, uploadsBefore } from './inputs.ts';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('placing recorded uploads', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function setUp() {
    const root = await mkdtemp(path.join(os.tmpdir(), 'upload-placement-'));
    dirs.push(root);
    const sandbox = path.join(root, 'sandbox');
    const copies = path.join(root, 'attachments');
    const outside = path.join(root, 'outside');
    for (const dir of [sandbox, copies, outside]) await mkdir(dir);
    /** Stores `text` as the agent's attachment copy (under the hash `as`, by default its own). */
    const store = async (text: string, as = sha(text)) => {
      await writeFile(path.join(copies, `${as}.txt`), text);
      return as;
    };
    const copyOf = async (sha256: string) => {
      const file = path.join(copies, `${sha256}.txt`);
      return (await stat(file).catch(() => null)) ? file : null;
    };
    return { sandbox, outside, store, copyOf };
  }

  const upload = (seq: number, name: string, sha256: string): RecordedUpload => ({
    seq,
    sandboxPath: `uploads/${name}`,
    sha256,
  });

  it('writes what is missing, leaves what is there, replaces a file of other bytes', async () => {
    const { sandbox, store, copyOf } = await setUp();
    await mkdir(path.join(sandbox, 'uploads'));
    const present = await store('already here');
    await writeFile(path.join(sandbox, 'uploads', 'here.txt'), 'already here');
    const before = await lstat(path.join(sandbox, 'uploads', 'here.txt'));
    await writeFile(path.join(sandbox, 'uploads', 'clash.txt'), 'a file the accepting gateway did not see');
    const placement = await placeUploads(
      sandbox,
      [
        upload(1, 'new.txt', await store('new bytes')),
        upload(2, 'here.txt', present),
        upload(3, 'clash.txt', await store('the upload')),
      ],
      copyOf,
    );
    expect(placement.failed).toEqual([]);
    expect(placement.placed).toEqual(['uploads/new.txt', 'uploads/clash.txt']);
    expect(placement.present).toEqual(['uploads/here.txt']);
    expect(await readFile(path.join(sandbox, 'uploads', 'new.txt'), 'utf8')).toBe('new bytes');
    expect(await readFile(path.join(sandbox, 'uploads', 'clash.txt'), 'utf8')).toBe('the upload');
    expect((await lstat(path.join(sandbox, 'uploads', 'here.txt'))).ino).toBe(before.ino);
  });

  it('keeps nothing whose bytes do not hash to the recorded SHA-256', async () => {
    const { sandbox, store, copyOf } = await setUp();
    const recorded = sha('what the user uploaded');
    await store('bytes changed on disk', recorded);
    const placement = await placeUploads(sandbox, [upload(1, 'notes.txt', recorded)], copyOf);
    expect(placement.placed).toEqual([]);
    expect(String(placement.failed[0]?.error)).toMatch(/uploads\/notes\.txt was not placed.*hashes to/);
    expect(await readdir(path.join(sandbox, 'uploads'))).toEqual([]);
  });

  it('never writes through a link the agent planted as uploads/', async () => {
    const { sandbox, outside, store, copyOf } = await setUp();
    await symlink(outside, path.join(sandbox, 'uploads'));
    const placement = await placeUploads(sandbox, [upload(1, 'notes.txt', await store('x'))], copyOf);
    expect(placement.placed).toEqual([]);
    expect(placement.failed).toHaveLength(1);
    expect(await readdir(outside)).toEqual([]);
  });

  it('takes only user-attachment entries after the seq, as uploads/<name> whatever box recorded them', () => {
    const hash = sha('x');
    const entries = [
      {
        seq: 1,
        id: 't0u0',
        kind: 'user-attachment',
        sandbox_path: '/a/sandboxes/id/uploads/old.txt',
        sha256: hash,
      },
      { seq: 2, id: 't0', kind: 'message' },
      {
        seq: 3,
        id: 't1u0',
        kind: 'user-attachment',
        sandbox_path: '/b/sandboxes/id/uploads/n (1).txt',
        sha256: hash,
      },
      { seq: 4, id: 't1u1', kind: 'user-attachment', sandbox_path: '/b/uploads/..', sha256: hash },
      { seq: 5, id: 't1u2', kind: 'user-attachment', sandbox_path: '/b/uploads/x.txt', sha256: 'not a hash' },
    ] as unknown as SequencedEntry[];
    expect(uploadsAfter(entries, 1)).toEqual([{ seq: 3, sandboxPath: 'uploads/n (1).txt', sha256: hash }]);
    expect(uploadInSandbox('/any/box/sandbox/uploads/.hidden')).toBeNull();
  });
});

describe('the model view’s upload lookup on another worker', () => {
  it('finds an upload recorded by another box by its place in this sandbox, in this attachment folder', () => {
    const hash = sha('image bytes');
    const entries = [
      {
        seq: 1,
        id: 't0u0',
        kind: 'user-attachment',
        sandbox_path: '/box-a/sandboxes/id/uploads/shot.png',
        file_path: `/box-a/agents/id/attachments/${hash}.png`,
        sha256: hash,
      },
      {
        seq: 2,
        id: 't0u1',
        kind: 'user-attachment',
        sandbox_path: '/box-a/sandboxes/id/uploads/other.png',
        file_path: '/etc/passwd',
        sha256: hash,
      },
    ] as unknown as SequencedEntry[];
    const find = uploadFinder(() => entries, '/box-b/agents/id/attachments');
    expect(find('/box-b/sandboxes/id/uploads/shot.png')).toEqual({
      storedPath: `/box-b/agents/id/attachments/${hash}.png`,
      sha256: hash,
    });
    // A stored name that is not the entry's hash points nowhere, on any box.
    expect(find('/box-b/sandboxes/id/uploads/other.png')).toBeUndefined();
    expect(find('/box-b/sandboxes/id/uploads/missing.png')).toBeUndefined();
  });
});

describe('the uploads a prompt listed, on another worker', () => {
  it('names each where this machine’s sandbox has it (a regenerated or repaired prompt)', () => {
    const entries = [
      {
        seq: 1,
        id: 't0ua0',
        kind: 'user-attachment',
        file_name: 'a.txt',
        sandbox_path: '/box-a/sb/uploads/a.txt',
      },
      { seq: 2, id: 't0u', kind: 'message', role: 'user', clientNonce: 'n0' },
      { seq: 3, id: 't1u', kind: 'message', role: 'user', clientNonce: 'n1', supersedes: 't0u' },
    ] as unknown as SequencedEntry[];
    expect(uploadsBefore('/box-b/sb', entries, 2)).toEqual(['/box-b/sb/uploads/a.txt']);
    expect(revisedUploads('/box-b/sb', entries, 't1u')).toEqual(['/box-b/sb/uploads/a.txt']);
  });
});

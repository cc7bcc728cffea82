/**
 * What an agent's sandbox holds, as a manifest's entries: a walk that never follows a link, and the
 * SHA-256 of each regular file. A file whose inode, size, mtime and ctime are the ones hashed last
 * time keeps its hash without being read again (any write changes the ctime), so a snapshot after a
 * small change reads only what changed.
 */
import { createHash } from 'node:crypto';
import { constants, type BigIntStats } from 'node:fs';
import { lstat, open, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { ManifestEntry } from './manifest.ts';
import { comparePaths } from './manifest.ts';

/** Files of a restore in progress (written, checked, then renamed into place); never part of a snapshot. */
export const RESTORE_TEMP_PREFIX = '.sendbox-restore-';

interface HashedFile {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  sha256: string;
}

/** The hashes of one sandbox's files, by relative path, with the stat they were taken at. */
export class FileHashes {
  private readonly known = new Map<string, HashedFile>();

  /** The hash of the file at `rel` when `info` is the stat it was hashed at. */
  lookup(rel: string, info: BigIntStats): string | undefined {
    const seen = this.known.get(rel);
    if (!seen) return undefined;
    const same =
      seen.ino === info.ino &&
      seen.size === info.size &&
      seen.mtimeNs === info.mtimeNs &&
      seen.ctimeNs === info.ctimeNs;
    return same ? seen.sha256 : undefined;
  }

  remember(rel: string, info: BigIntStats, sha256: string): void {
    this.known.set(rel, {
      ino: info.ino,
      size: info.size,
      mtimeNs: info.mtimeNs,
      ctimeNs: info.ctimeNs,
      sha256,
    });
  }

  /** Keeps only the paths in `paths` (the others are gone). */
  retain(paths: ReadonlySet<string>): void {
    for (const rel of this.known.keys()) if (!paths.has(rel)) this.known.delete(rel);
  }
}

export interface SandboxTree {
  entries: ManifestEntry[];
  /** Paths left out: neither a folder, a regular file nor a link (FIFOs, sockets, devices). */
  skipped: string[];
  /** Files read to hash them (the others kept the hash they had). */
  hashed: number;
}

/** Hashes a file through one open handle (no link followed); its stat is taken on the same handle. */
export async function hashFile(file: string): Promise<{ sha256: string; info: BigIntStats }> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat({ bigint: true });
    if (!info.isFile()) throw new Error(`${file} is no longer a regular file`);
    const hash = createHash('sha256');
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
    return { sha256: hash.digest('hex'), info };
  } finally {
    await handle.close();
  }
}

/** Walks `root` (not itself an entry) and returns its entries sorted by path. */
export async function readSandboxTree(root: string, hashes: FileHashes): Promise<SandboxTree> {
  const tree: SandboxTree = { entries: [], skipped: [], hashed: 0 };
  const files = new Set<string>();
  await walk(root, '', hashes, tree, files);
  hashes.retain(files);
  tree.entries.sort((a, b) => comparePaths(a.path, b.path));
  return tree;
}

async function walk(
  root: string,
  dirRel: string,
  hashes: FileHashes,
  tree: SandboxTree,
  files: Set<string>,
): Promise<void> {
  let names: string[];
  try {
    names = await readdir(path.join(root, dirRel));
  } catch (error) {
    // A folder removed while the walk ran (a tool is working) is simply not there.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) {
    if (dirRel === '' && name.startsWith(RESTORE_TEMP_PREFIX)) continue;
    const rel = dirRel === '' ? name : `${dirRel}/${name}`;
    const full = path.join(root, rel);
    let info: BigIntStats;
    try {
      info = await lstat(full, { bigint: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const mode = Number(info.mode & 0o7777n);
    if (info.isDirectory()) {
      tree.entries.push({ path: rel, type: 'dir', mode });
      await walk(root, rel, hashes, tree, files);
    } else if (info.isSymbolicLink()) {
      const target = await readlink(full).catch(() => null);
      if (target !== null) tree.entries.push({ path: rel, type: 'symlink', target });
    } else if (info.isFile()) {
      let sha256 = hashes.lookup(rel, info);
      if (sha256 === undefined) {
        const hashed = await hashFile(full).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT' || error.code === 'ELOOP') return null;
          throw error;
        });
        if (hashed === null) continue;
        ({ sha256, info } = hashed);
        hashes.remember(rel, info, sha256);
        tree.hashed += 1;
      }
      files.add(rel);
      tree.entries.push({
        path: rel,
        type: 'file',
        mode,
        size: Number(info.size),
        mtimeMs: Number(info.mtimeNs / 1_000_000n),
        sha256,
      });
    } else {
      tree.skipped.push(rel);
    }
  }
}

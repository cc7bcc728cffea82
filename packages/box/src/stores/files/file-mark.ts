/**
 * What tells one version of a file from another without reading it: the
 * session compares marks to learn whether another writer changed a file.
 */
import { statSync, type Stats } from 'node:fs';

export interface FileMark {
  ino: number;
  size: number;
  mtimeMs: number;
}

export function fileMark(file: string): FileMark | null {
  let info: Stats | undefined;
  try {
    info = statSync(file, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  return info ? { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs } : null;
}

export function sameFile(a: FileMark | null, b: FileMark | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

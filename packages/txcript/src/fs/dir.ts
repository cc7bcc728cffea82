import { promises as fs, type Dirent } from 'node:fs';
import { sep } from 'node:path';

/** Entries of a folder, or none when it is missing or unreadable (listing skips what it cannot read). */
export async function readDirSafe(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * What `path.join(dir, name)` gives for an entry `name` of a folder (one name:
 * no separator, not `.` or `..`) when `dir` is normalised (path.join or
 * path.normalize made it). A listing joins thousands of names; path.join
 * normalises the whole path each time, and called that often it sets V8's
 * optimising compiler going, which costs a short run CPU time and megabytes.
 */
export function entryPath(dir: string, name: string): string {
  if (dir === '.') return name;
  return dir.endsWith(sep) ? `${dir}${name}` : `${dir}${sep}${name}`;
}

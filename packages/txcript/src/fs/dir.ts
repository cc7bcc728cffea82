import { promises as fs, type Dirent } from 'node:fs';

/** Entries of a folder, or none when it is missing or unreadable (listing skips what it cannot read). */
export async function readDirSafe(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/**
 * `SENDBOX_MASTER_KEY_FILE` (issue 25 §1): 32 raw random bytes that every worker of a cluster reads,
 * kept private (0600). Agents' secrets in PostgreSQL are encrypted with it.
 */
import { readFile, stat } from 'node:fs/promises';

export const MASTER_KEY_BYTES = 32;

export async function readMasterKey(file: string | undefined): Promise<Buffer> {
  const fix = `make one with \`head -c ${MASTER_KEY_BYTES} /dev/urandom > FILE && chmod 600 FILE\`, copy the same file to every worker, and set SENDBOX_MASTER_KEY_FILE to its path`;
  if (!file) throw new Error(`a cluster needs its master key: SENDBOX_MASTER_KEY_FILE is not set; ${fix}`);
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    throw new Error(`the master key ${file} cannot be read (${(error as Error).message}); ${fix}`, {
      cause: error,
    });
  }
  if ((info.mode & 0o077) !== 0) {
    throw new Error(
      `the master key ${file} is readable by others (mode ${(info.mode & 0o777).toString(8)}); run \`chmod 600 ${file}\``,
    );
  }
  const key = await readFile(file);
  if (key.length !== MASTER_KEY_BYTES) {
    throw new Error(`the master key ${file} holds ${key.length} bytes, not ${MASTER_KEY_BYTES}; ${fix}`);
  }
  return key;
}

/**
 * The per-agent secret store: `<agentDir>/secrets.enc`, a 0600 file holding
 * the agent's secrets encrypted with AES-256-GCM. The key lives outside every
 * agent folder (`<dataDir>/keys/secrets.key`, 0600), so copying or sharing an
 * agent folder never carries readable secrets; the agent id is the GCM
 * associated data, so a file moved to another agent does not decrypt.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir } from '../fs/atomic.ts';
import { readSealed, writeSealed } from './sealed-file.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { SecretsStore } from '../stores/secrets.ts';

const KEY_BYTES = 32;
const plainSchema = z.record(z.string(), z.string());

/** Environment variable names a secret may be stored under. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function keyFilePath(dataDir: string): string {
  return path.join(dataDir, 'keys', 'secrets.key');
}

/** Reads the host key, creating it (32 random bytes, 0600, folder 0700) on first use. */
export async function loadOrCreateSecretKey(dataDir: string): Promise<Buffer> {
  const file = keyFilePath(dataDir);
  try {
    const key = await readFile(file);
    if (key.length !== KEY_BYTES) {
      throw new Error(
        `${file}: the secret key must be ${KEY_BYTES} bytes, found ${key.length}; restore it from backup`,
      );
    }
    return key;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  await ensurePrivateDir(path.dirname(file));
  const key = randomBytes(KEY_BYTES);
  try {
    // 'wx': if another process created it meanwhile, use theirs.
    await writeFile(file, key, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecretKey(dataDir);
    throw error;
  }
}

export class SecretStore implements SecretsStore {
  private cache: Map<string, string> | null = null;

  constructor(
    private readonly file: string,
    private readonly key: Buffer,
    /** The GCM associated data: the agent's id (or `box:secrets` for the box-wide store). */
    private readonly agentId: string,
  ) {}

  /** All secrets, name → value. */
  async all(): Promise<ReadonlyMap<string, string>> {
    if (this.cache) return this.cache;
    const plain = await readSealed(this.file, this.key, this.agentId);
    this.cache = new Map(plain === undefined ? [] : Object.entries(plainSchema.parse(plain)));
    return this.cache;
  }

  async set(name: string, value: string): Promise<void> {
    if (!SECRET_NAME_PATTERN.test(name))
      throw new Error(`secret name ${JSON.stringify(name)} is not a valid environment variable name`);
    const next = new Map(await this.all());
    next.set(name, value);
    await writeSealed(this.file, this.key, this.agentId, Object.fromEntries(next));
    this.cache = next;
  }

  /** Removes one secret; false when there was none by that name. */
  async delete(name: string): Promise<boolean> {
    const next = new Map(await this.all());
    if (!next.delete(name)) return false;
    await writeSealed(this.file, this.key, this.agentId, Object.fromEntries(next));
    this.cache = next;
    return true;
  }
}

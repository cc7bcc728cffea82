/**
 * The per-agent secret store: `<agentDir>/secrets.enc`, a 0600 file holding
 * the agent's secrets encrypted with AES-256-GCM. The key lives outside every
 * agent folder (`<dataDir>/keys/secrets.key`, 0600), so copying or sharing an
 * agent folder never carries readable secrets; the agent id is the GCM
 * associated data, so a file moved to another agent does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { SecretsStore } from '../stores/secrets.ts';

const KEY_BYTES = 32;
const fileSchema = z.object({
  v: z.literal(1),
  iv: z.string(),
  tag: z.string(),
  data: z.string(),
});
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
    private readonly agentId: string,
  ) {}

  /** All secrets, name → value. */
  async all(): Promise<ReadonlyMap<string, string>> {
    if (this.cache) return this.cache;
    let raw: string;
    try {
      raw = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return (this.cache = new Map());
      throw error;
    }
    const parsed = fileSchema.safeParse(JSON.parse(raw));
    if (!parsed.success)
      throw new Error(`${this.file}: not a sendbox secret store (${parsed.error.message})`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(parsed.data.iv, 'base64'));
    decipher.setAAD(Buffer.from(this.agentId));
    decipher.setAuthTag(Buffer.from(parsed.data.tag, 'base64'));
    let plain: string;
    try {
      plain = Buffer.concat([
        decipher.update(Buffer.from(parsed.data.data, 'base64')),
        decipher.final(),
      ]).toString('utf8');
    } catch (error) {
      throw new Error(`${this.file}: cannot decrypt (wrong key file or the store belongs to another agent)`, {
        cause: error,
      });
    }
    this.cache = new Map(Object.entries(plainSchema.parse(JSON.parse(plain))));
    return this.cache;
  }

  async set(name: string, value: string): Promise<void> {
    if (!SECRET_NAME_PATTERN.test(name))
      throw new Error(`secret name ${JSON.stringify(name)} is not a valid environment variable name`);
    const next = new Map(await this.all());
    next.set(name, value);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(this.agentId));
    const data = Buffer.concat([
      cipher.update(JSON.stringify(Object.fromEntries(next)), 'utf8'),
      cipher.final(),
    ]);
    const body = JSON.stringify({
      v: 1,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    });
    await writeFileAtomic(this.file, body, { mode: 0o600 });
    this.cache = next;
  }
}

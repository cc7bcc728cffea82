/**
 * A JSON value kept in a 0600 file encrypted with AES-256-GCM under the box's key
 * (`keys/secrets.key`): `{v: 1, iv, tag, data}`. The associated data names what the file is for
 * (an agent's id, `box:secrets`, `box:mcp-oauth`), so a file moved to another use does not decrypt.
 * Writes are atomic (secrets/store.ts, mcp/oauth-store.ts).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { StoredDocument } from '../stores/documents.ts';

const fileSchema = z.object({
  v: z.literal(1),
  iv: z.string(),
  tag: z.string(),
  data: z.string(),
});

/** The decrypted JSON of `file`, or undefined when there is no file; throws naming the file otherwise. */
export async function readSealed(file: string, key: Buffer, aad: string): Promise<unknown> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error(`${file}: not a sendbox sealed file (not JSON); restore it from a backup or remove it`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${file}: not a sendbox sealed file (${parsed.error.message})`);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parsed.data.iv, 'base64'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(parsed.data.tag, 'base64'));
  let plain: string;
  try {
    plain = Buffer.concat([
      decipher.update(Buffer.from(parsed.data.data, 'base64')),
      decipher.final(),
    ]).toString('utf8');
  } catch (error) {
    throw new Error(`${file}: cannot decrypt (wrong key file, or the file belongs to something else)`, {
      cause: error,
    });
  }
  return JSON.parse(plain) as unknown;
}

/** Encrypts `value` (JSON) into `file`, atomically, 0600. */
export async function writeSealed(file: string, key: Buffer, aad: string, value: unknown): Promise<void> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const body = JSON.stringify({
    v: 1,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  });
  await writeFileAtomic(file, body, { mode: 0o600 });
}

/** A sealed file as a StoredDocument: cached after the first read, changed one at a time. */
export class SealedFileDocument implements StoredDocument {
  private cache: { value: unknown } | null = null;
  /** Read-modify-writes one at a time. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly key: Buffer,
    private readonly aad: string,
  ) {}

  async read(): Promise<unknown> {
    await this.queue;
    return this.load();
  }

  update<T>(change: (current: unknown) => { value: unknown; result: T }): Promise<T> {
    const run = this.queue.then(async () => {
      const next = change(structuredClone(await this.load()));
      await writeSealed(this.file, this.key, this.aad, next.value);
      this.cache = { value: next.value };
      return next.result;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(): Promise<unknown> {
    this.cache ??= { value: await readSealed(this.file, this.key, this.aad) };
    return this.cache.value;
  }
}

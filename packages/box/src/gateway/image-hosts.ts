/**
 * The domains whose images the user chose to load without asking each time:
 * `<data-dir>/image-hosts.json` (`{"hosts": [...]}`, mode 0600, written atomically).
 * A domain covers its subdomains. The page loads those images through the image
 * proxy on its own; the gateway only keeps the list.
 */
import path from 'node:path';
import { z } from 'zod';
import { readJsonFile } from '../fs/json-file.ts';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';
import { GatewayError } from './errors.ts';

const MAX_HOSTS = 500;

/** A DNS name (letters, digits, hyphens, dots) or an IPv4 address; lower-case, no port. */
export const imageHostSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=[a-z0-9])[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*$/,
    'expected a domain name such as "images.example.com" (no scheme, port or path)',
  );

const fileSchema = z.object({ hosts: z.array(imageHostSchema).max(MAX_HOSTS) });

export function imageHostsPath(dataDir: string): string {
  return path.join(dataDir, 'image-hosts.json');
}

export class ImageHosts {
  #hosts: string[];
  #writing: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: string,
    hosts: string[],
  ) {
    this.#hosts = hosts;
  }

  /** Reads the list; a file that is not a valid list stops the start (it is never overwritten). */
  static async open(dataDir: string): Promise<ImageHosts> {
    const file = imageHostsPath(dataDir);
    const data = await readJsonFile(
      file,
      fileSchema,
      'is not a list of image domains ({"hosts": ["example.com", ...]}); fix or delete it and start again',
    );
    if (data === null) return new ImageHosts(file, []);
    return new ImageHosts(file, [...new Set(data.hosts)].sort());
  }

  list(): string[] {
    return [...this.#hosts];
  }

  allow(host: string): Promise<string[]> {
    return this.#change((hosts) => {
      if (hosts.includes(host)) return hosts;
      if (hosts.length >= MAX_HOSTS) {
        throw new GatewayError(`allowImageHost: at most ${MAX_HOSTS} domains; forget some first`, 409);
      }
      return [...hosts, host].sort();
    });
  }

  forget(host: string): Promise<string[]> {
    return this.#change((hosts) => (hosts.includes(host) ? hosts.filter((known) => known !== host) : hosts));
  }

  /** Changes are written one after another; the list in memory changes only once its file is written. */
  #change(update: (hosts: string[]) => string[]): Promise<string[]> {
    const done = this.#writing.then(async () => {
      const next = update(this.#hosts);
      if (next !== this.#hosts) {
        await ensurePrivateDir(path.dirname(this.file));
        await writeFileAtomic(this.file, `${JSON.stringify({ hosts: next }, null, 2)}\n`, { mode: 0o600 });
        this.#hosts = next;
      }
      return this.list();
    });
    this.#writing = done.catch(() => undefined);
    return done;
  }
}

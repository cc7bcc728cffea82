/**
 * What every list cache shares: where cache files live, when caching is off,
 * the stat signature that says a source is unchanged, and one JSON document
 * per cache, read once and written back atomically when it changed.
 *
 * Files go to `$XDG_CACHE_HOME/txcript/` (an absolute value only, as the XDG
 * spec says), else `$HOME/.cache/txcript/`: folder 0700, file 0600 (titles
 * come from user text). A document that is missing, unreadable, corrupt, of
 * another format or version, or for another scope is ignored (and replaced);
 * one that cannot be written is left alone. The first write of a version
 * removes the files older versions of that cache left. A cache never fails a
 * listing.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic.ts';
import { isJsonObject } from '../model/json.ts';
import { envValue, homeDir } from './env.ts';

/** The coarsest file time granularity in common use (FAT: 2 s). */
export const RACY_WINDOW_MS = 2000;

/** `TXCRIPT_NO_CACHE` set to anything but empty or `0`. */
export function summaryCacheDisabled(env: NodeJS.ProcessEnv): boolean {
  const v = envValue(env, 'TXCRIPT_NO_CACHE');
  return v !== undefined && v !== '0';
}

/** `$XDG_CACHE_HOME/txcript` (an absolute value only), else `$HOME/.cache/txcript`. */
export function summaryCacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = envValue(env, 'XDG_CACHE_HOME');
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homeDir(env), '.cache'), 'txcript');
}

/** `<dir>/<name>-v<version>-<hash of scope>.<ext>`: one file per cache kind, version and scope (its roots). */
export function cacheFileFor(
  env: NodeJS.ProcessEnv,
  name: string,
  version: number,
  scope: string,
  ext = 'json',
): string {
  const hash = createHash('sha256').update(scope).digest('hex').slice(0, 16);
  return join(summaryCacheDir(env), `${name}-v${version}-${hash}.${ext}`);
}

/**
 * The files of older versions of the cache `file` (cacheFileFor's name, same
 * kind and scope, a lower version), which no run of this txcript reads. Newer
 * ones are left to the txcript that wrote them.
 */
export function olderVersionsOf(file: string): string[] {
  const m = /^(.+)-v(\d+)-([0-9a-f]{16})(\.[a-z]+)$/.exec(basename(file));
  if (m === null) return [];
  const [, name, version, hash, ext] = m as unknown as [string, string, string, string, string];
  const prefix = `${name}-v`;
  const suffix = `-${hash}${ext}`;
  let names: string[];
  try {
    names = readdirSync(dirname(file));
  } catch {
    return [];
  }
  return names
    .filter((n) => {
      if (!n.startsWith(prefix) || !n.endsWith(suffix)) return false;
      const v = n.slice(prefix.length, n.length - suffix.length);
      return /^\d+$/.test(v) && Number(v) < Number(version);
    })
    .map((n) => join(dirname(file), n));
}

/** A file's identity and version as one string, and whether it changed too recently to vouch for. */
export interface StatSignature {
  sig: string;
  racy: boolean;
  /** The path is a folder (its signature says nothing of what is in it). */
  directory: boolean;
  size: number;
}

/**
 * The signature of `path` (device, inode, size, mtime and, unless `ctime:
 * false`, ctime); undefined when it does not exist. Other errors throw. A
 * source changed less than RACY_WINDOW_MS before `now` is `racy`: a second
 * change within the file system's time granularity could leave its signature
 * as it was, so it must not be remembered.
 *
 * Times are in nanoseconds (`times: 'ns'`, the default), or as the
 * milliseconds of a plain stat (`'ms'`, with their fraction): the racy window
 * already covers changes closer together than that, and a listing that stats
 * thousands of files spends far less on plain stats than on BigInt ones. The
 * two give different signatures: a cache keeps to one (and changes its
 * version when it changes).
 */
export function statSignature(
  path: string,
  now: number,
  { ctime, times = 'ns' }: { ctime: boolean; times?: 'ns' | 'ms' },
): StatSignature | undefined {
  let identity: string;
  let changed: string;
  let changedMs: number;
  let directory: boolean;
  let size: number;
  if (times === 'ms') {
    const s = statSync(path, { throwIfNoEntry: false });
    if (s === undefined) return undefined;
    identity = `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
    changed = String(s.ctimeMs);
    changedMs = ctime && s.ctimeMs > s.mtimeMs ? s.ctimeMs : s.mtimeMs;
    directory = s.isDirectory();
    size = s.size;
  } else {
    const s = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (s === undefined) return undefined;
    identity = `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
    changed = String(s.ctimeNs);
    changedMs = Number(ctime && s.ctimeMs > s.mtimeMs ? s.ctimeMs : s.mtimeMs);
    directory = s.isDirectory();
    size = Number(s.size);
  }
  return {
    sig: ctime ? `${identity}:${changed}` : identity,
    racy: now - changedMs < RACY_WINDOW_MS,
    directory,
    size,
  };
}

/** Checks for stored entries, which may come from an older or damaged file. */
export const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
export const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** How a cache document is told apart from others: `format` and `version` constants, `scope` its roots. */
export interface CacheIdentity {
  format: string;
  version: number;
  scope: unknown;
}

/**
 * One cache document: named sections of entries keyed by source path. Entries
 * looked up (`keep`) or made (`put`) this run are what `save` writes, so those
 * of sources that are gone drop out.
 */
export class CacheDocument<S extends string> {
  /** Each section as parsed (looked up in place: a copy into a Map would cost a listing an object per entry). */
  private readonly loaded = new Map<S, { entries: Record<string, unknown>; size: number }>();
  private readonly next = new Map<S, Map<string, unknown>>();
  /** A new entry was made, or the file on disk is not a usable cache. */
  private changed = false;
  /** No file of this version was there: its first write removes those of older versions. */
  private readonly first: boolean;

  constructor(
    private readonly file: string,
    private readonly identity: CacheIdentity,
    private readonly sections: readonly S[],
  ) {
    let text: string | undefined;
    let value: unknown;
    try {
      text = readFileSync(file, 'utf8');
      value = JSON.parse(text);
    } catch {
      value = undefined; // missing, unreadable or not JSON: start empty
    }
    const usable =
      isJsonObject(value) &&
      value.format === identity.format &&
      value.version === identity.version &&
      JSON.stringify(value.scope) === JSON.stringify(identity.scope) &&
      sections.every((s) => isJsonObject(value[s]));
    for (const s of sections) {
      const stored = usable ? (value as Record<S, Record<string, unknown>>)[s] : {};
      this.loaded.set(s, { entries: stored, size: Object.keys(stored).length });
      this.next.set(s, new Map());
    }
    // A file that is there but not usable is replaced.
    this.changed = text !== undefined && !usable;
    this.first = text === undefined;
  }

  /** The stored entry of `key`, still to be checked by the caller. */
  stored(section: S, key: string): unknown {
    const { entries } = this.loaded.get(section)!;
    return Object.hasOwn(entries, key) ? entries[key] : undefined;
  }

  /** How many entries the document held when read. */
  storedCount(section: S): number {
    return this.loaded.get(section)!.size;
  }

  /** Keep a stored entry that was served. */
  keep(section: S, key: string, entry: unknown): void {
    this.next.get(section)!.set(key, entry);
  }

  /** Remember a fresh entry. */
  put(section: S, key: string, entry: unknown): void {
    this.next.get(section)!.set(key, entry);
    this.changed = true;
  }

  /** Write the document if anything changed or dropped out; never throws. */
  async save(): Promise<void> {
    // Without a new entry, `next` holds only kept ones: a smaller section means sources are gone.
    const dropped = this.sections.some((s) => this.next.get(s)!.size !== this.loaded.get(s)!.size);
    if (!this.changed && !dropped) return;
    const { format, version, scope } = this.identity;
    const content: Record<string, unknown> = { format, version, scope };
    for (const s of this.sections) content[s] = Object.fromEntries(this.next.get(s)!);
    try {
      const dir = dirname(this.file);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      // A cache lost in a crash is only rebuilt: no fsync, but never seen half-written.
      await writeFileAtomic(this.file, JSON.stringify(content), { mode: 0o600, durable: false });
      if (this.first) for (const old of olderVersionsOf(this.file)) rmSync(old, { force: true });
    } catch {
      // A cache that cannot be written only costs the next run its speed.
    }
  }
}

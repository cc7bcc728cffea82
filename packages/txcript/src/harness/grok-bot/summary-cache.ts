/**
 * The list's summary cache: what discovery learnt from each transcript and
 * ledger, kept between runs so that sources whose files have not changed are
 * not read again.
 *
 * One JSON file per pair of roots, `$XDG_CACHE_HOME/txcript/` (else
 * `$HOME/.cache/txcript/`), folder 0700 and file 0600 (titles come from user
 * text). A fact is served only while its source's stat signature (device,
 * inode, size, mtime and ctime in nanoseconds) is the one taken before the
 * source was read; for a ledger, the signatures of `store.db` and of
 * `store.db-wal` (absent or present; no ctime, see `ledger`), since a WAL-mode
 * writer changes only the WAL. A source changed less than RACY_WINDOW_MS before it was stat'ed is not
 * remembered: a second change within the file system's time granularity
 * could leave its signature as it was. Only successful reads are remembered,
 * so every warning is reported on every run.
 *
 * The cache never makes a listing fail: a file that is missing, unreadable,
 * corrupt, from another version or for other roots is ignored (and replaced),
 * and one that cannot be written is left alone. Sources are only stat'ed.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { writeFileAtomic } from '../../fs/atomic.ts';
import { isJsonObject } from '../../model/json.ts';
import { envValue, homeDir } from '../env.ts';
import type { JsonlScan } from './discover.ts';
import type { LedgerFacts } from './ledger-reads.ts';
import type { GrokBotRoots } from './roots.ts';

/** Bumped whenever what is stored, or how it is computed, changes: an older file is then ignored. */
export const SUMMARY_CACHE_VERSION = 1;
const FORMAT = 'txcript grok_bot summary cache';
/** The coarsest file time granularity in common use (FAT: 2 s). */
export const RACY_WINDOW_MS = 2000;

export interface SummaryCache {
  /** The scan of a JSONL transcript: remembered while the file is unchanged, else `scan()`. */
  transcript(path: string, wantSubagentIds: boolean, scan: () => JsonlScan): JsonlScan;
  /**
   * The list facts of a `store.db`, remembered while it and its WAL are unchanged; else a miss, whose
   * `remember` takes the facts read afterwards (vouched for by the signatures taken now, before the read).
   */
  lookupLedger(path: string, needTitle: boolean): LedgerLookup;
  /** How many ledgers have facts remembered: at most that many ledger lookups hit. */
  readonly rememberedLedgers: number;
  /** Write the file if anything changed; never throws. */
  save(): Promise<void>;
}

/** A ledger's remembered facts, or a miss: read the ledger, then hand the facts to `remember`. */
export type LedgerLookup = { hit: LedgerFacts } | { remember: (facts: LedgerFacts | undefined) => void };

const forget: LedgerLookup = { remember: () => {} };

/** Every source read afresh, nothing written (`list --no-cache`, `TXCRIPT_NO_CACHE=1`). */
export const noSummaryCache: SummaryCache = {
  transcript: (_path, _want, scan) => scan(),
  lookupLedger: () => forget,
  rememberedLedgers: 0,
  save: () => Promise.resolve(),
};

export interface SummaryCacheOptions {
  /** Wall clock in ms, compared with file times for the racy window. Default Date.now. */
  now?: () => number;
}

/** `TXCRIPT_NO_CACHE` set to anything but empty or `0`. */
export function summaryCacheDisabled(env: NodeJS.ProcessEnv): boolean {
  const v = envValue(env, 'TXCRIPT_NO_CACHE');
  return v !== undefined && v !== '0';
}

/** `$XDG_CACHE_HOME/txcript` (an absolute value only, as the XDG spec says), else `$HOME/.cache/txcript`. */
export function summaryCacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = envValue(env, 'XDG_CACHE_HOME');
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homeDir(env), '.cache'), 'txcript');
}

/** The cache file of one pair of roots: its name holds the format version and a hash of the resolved roots. */
export function summaryCacheFile(env: NodeJS.ProcessEnv, roots: GrokBotRoots): string {
  const hash = createHash('sha256')
    .update(`${resolve(roots.transcripts)}\0${resolve(roots.agents)}`)
    .digest('hex')
    .slice(0, 16);
  return join(summaryCacheDir(env), `grok-bot-v${SUMMARY_CACHE_VERSION}-${hash}.json`);
}

interface CachedTranscript {
  sig: string;
  /** The scan looked for subagent ids (one made without them cannot answer a request for them). */
  subagentIds: boolean;
  scan: JsonlScan;
}

interface CachedLedger {
  sig: string;
  /** The read looked for a title (made only when the profile has no name). */
  titled: boolean;
  facts: LedgerFacts;
}

interface CacheFile {
  format: typeof FORMAT;
  version: typeof SUMMARY_CACHE_VERSION;
  roots: { transcripts: string; agents: string };
  transcripts: Record<string, CachedTranscript>;
  ledgers: Record<string, CachedLedger>;
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

function isJsonlScan(v: unknown): v is JsonlScan {
  return (
    isJsonObject(v) &&
    typeof v.envelope === 'boolean' &&
    isOptionalString(v.title) &&
    isCount(v.lineCount) &&
    Array.isArray(v.subagentIds) &&
    v.subagentIds.every((id) => typeof id === 'string') &&
    isTime(v.mtimeMs)
  );
}

function isLedgerFacts(v: unknown): v is LedgerFacts {
  return (
    isJsonObject(v) &&
    isCount(v.count) &&
    (v.lastActivityMs === undefined || isTime(v.lastActivityMs)) &&
    isOptionalString(v.title)
  );
}

/** A stored entry when it has its signature, its flag and a payload of the right shape. */
function cachedEntry<E>(
  v: unknown,
  flag: string,
  payload: string,
  isPayload: (p: unknown) => boolean,
): E | undefined {
  return isJsonObject(v) && typeof v.sig === 'string' && typeof v[flag] === 'boolean' && isPayload(v[payload])
    ? (v as unknown as E)
    : undefined;
}

const cachedTranscript = (v: unknown): CachedTranscript | undefined =>
  cachedEntry(v, 'subagentIds', 'scan', isJsonlScan);
const cachedLedger = (v: unknown): CachedLedger | undefined =>
  cachedEntry(v, 'titled', 'facts', isLedgerFacts);

/**
 * A file's identity and version as one string, and whether it changed too
 * recently to vouch for; undefined when it does not exist. Other errors throw.
 * `ctime: false` leaves the inode change time out (see the WAL in `ledger`).
 */
function signature(
  path: string,
  now: number,
  { ctime }: { ctime: boolean },
): { sig: string; racy: boolean } | undefined {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (s === undefined) return undefined;
  const identity = `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
  const changedMs = Number(ctime && s.ctimeMs > s.mtimeMs ? s.ctimeMs : s.mtimeMs);
  return {
    sig: ctime ? `${identity}:${s.ctimeNs}` : identity,
    racy: now - changedMs < RACY_WINDOW_MS,
  };
}

/** The entries of a parsed cache file, or undefined when it is not one for these roots in this version. */
function entriesOf(
  value: unknown,
  roots: CacheFile['roots'],
): { transcripts: Map<string, unknown>; ledgers: Map<string, unknown> } | undefined {
  if (
    !isJsonObject(value) ||
    value.format !== FORMAT ||
    value.version !== SUMMARY_CACHE_VERSION ||
    !isJsonObject(value.roots) ||
    value.roots.transcripts !== roots.transcripts ||
    value.roots.agents !== roots.agents ||
    !isJsonObject(value.transcripts) ||
    !isJsonObject(value.ledgers)
  )
    return undefined;
  return {
    transcripts: new Map(Object.entries(value.transcripts)),
    ledgers: new Map(Object.entries(value.ledgers)),
  };
}

class FileSummaryCache implements SummaryCache {
  /** What this run looked up and may keep: entries not looked up belong to sources that are gone. */
  private readonly next = {
    transcripts: new Map<string, CachedTranscript>(),
    ledgers: new Map<string, CachedLedger>(),
  };
  private readonly loaded: { transcripts: Map<string, unknown>; ledgers: Map<string, unknown> };
  /** A new entry was made, or the file on disk is not a usable cache. */
  private changed: boolean;

  constructor(
    private readonly file: string,
    private readonly roots: CacheFile['roots'],
    private readonly now: () => number,
  ) {
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      text = undefined; // missing or unreadable: start empty
    }
    let parsed: unknown;
    try {
      parsed = text === undefined ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const entries = parsed === undefined ? undefined : entriesOf(parsed, roots);
    this.loaded = entries ?? { transcripts: new Map(), ledgers: new Map() };
    // A file that is there but not usable is replaced.
    this.changed = text !== undefined && entries === undefined;
  }

  transcript(path: string, wantSubagentIds: boolean, scan: () => JsonlScan): JsonlScan {
    let sig: ReturnType<typeof signature>;
    try {
      sig = signature(path, this.now(), { ctime: true });
    } catch {
      return scan(); // the scan reports why the file cannot be read
    }
    if (sig === undefined) return scan();
    const hit = cachedTranscript(this.loaded.transcripts.get(path));
    if (hit !== undefined && hit.sig === sig.sig && (hit.subagentIds || !wantSubagentIds)) {
      this.next.transcripts.set(path, hit);
      return wantSubagentIds ? hit.scan : { ...hit.scan, subagentIds: [] };
    }
    const fresh = scan();
    if (!sig.racy) {
      this.next.transcripts.set(path, { sig: sig.sig, subagentIds: wantSubagentIds, scan: fresh });
      this.changed = true;
    }
    return fresh;
  }

  get rememberedLedgers(): number {
    return this.loaded.ledgers.size;
  }

  lookupLedger(path: string, needTitle: boolean): LedgerLookup {
    let db: ReturnType<typeof signature>;
    let wal: ReturnType<typeof signature>;
    try {
      db = signature(path, this.now(), { ctime: true });
      // Every write to the WAL moves its mtime. Its ctime is left out: SQLite running as root
      // chowns the WAL on every open, a reader's included, which moves the ctime and nothing else.
      wal = signature(`${path}-wal`, this.now(), { ctime: false });
    } catch {
      return forget; // the read reports why the file cannot be read
    }
    if (db === undefined) return forget;
    const sig = `${db.sig}|${wal?.sig ?? '-'}`;
    const hit = cachedLedger(this.loaded.ledgers.get(path));
    if (hit !== undefined && hit.sig === sig && (hit.titled || !needTitle)) {
      this.next.ledgers.set(path, hit);
      if (needTitle || hit.facts.title === undefined) return { hit: hit.facts };
      const { title: _unasked, ...facts } = hit.facts;
      return { hit: facts };
    }
    if (db.racy || wal?.racy === true) return forget;
    return {
      remember: (fresh) => {
        if (fresh === undefined) return;
        this.next.ledgers.set(path, { sig, titled: needTitle, facts: fresh });
        this.changed = true;
      },
    };
  }

  async save(): Promise<void> {
    // Without a new entry, `next` holds only loaded ones: a smaller map means sources are gone.
    const dropped =
      this.next.transcripts.size !== this.loaded.transcripts.size ||
      this.next.ledgers.size !== this.loaded.ledgers.size;
    if (!this.changed && !dropped) return;
    const content: CacheFile = {
      format: FORMAT,
      version: SUMMARY_CACHE_VERSION,
      roots: this.roots,
      transcripts: Object.fromEntries(this.next.transcripts),
      ledgers: Object.fromEntries(this.next.ledgers),
    };
    try {
      const dir = dirname(this.file);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      // A cache lost in a crash is only rebuilt: no fsync, but never seen half-written.
      await writeFileAtomic(this.file, JSON.stringify(content), { mode: 0o600, durable: false });
    } catch {
      // A cache that cannot be written only costs the next run its speed.
    }
  }
}

/** The summary cache of these roots; `noSummaryCache` when the env says `TXCRIPT_NO_CACHE`. Never throws. */
export function openSummaryCache(
  env: NodeJS.ProcessEnv,
  roots: GrokBotRoots,
  options: SummaryCacheOptions = {},
): SummaryCache {
  if (summaryCacheDisabled(env)) return noSummaryCache;
  const resolved = { transcripts: resolve(roots.transcripts), agents: resolve(roots.agents) };
  return new FileSummaryCache(summaryCacheFile(env, roots), resolved, options.now ?? Date.now);
}

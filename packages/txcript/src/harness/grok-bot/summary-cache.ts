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
import { resolve } from 'node:path';
import {
  CacheDocument,
  cacheFileFor,
  isCount,
  isOptionalString,
  statSignature,
  summaryCacheDisabled,
  type StatSignature,
} from '../summary-cache-file.ts';
import { isJsonObject } from '../../model/json.ts';
import type { LedgerFacts } from './ledger-reads.ts';
import type { GrokBotRoots } from './roots.ts';

/** Bumped whenever what is stored, or how it is computed, changes: an older file is then ignored. */
export const SUMMARY_CACHE_VERSION = 3;
const FORMAT = 'txcript grok_bot summary cache';

/** What one streaming pass over a JSONL file learns (discover.ts scans, this cache remembers). */
export interface JsonlScan {
  /** The first non-blank line is a `{role: user|assistant|tool, message}` envelope. */
  envelope: boolean;
  title?: string;
  /**
   * Lines that are whole records of a conversation role (a JSON object naming a `"role"`, ending in
   * `}`): the messages `view` shows for a file the box wrote, without parsing every line. A line cut
   * short by a crash, or a blank one, is not counted.
   */
  messageCount: number;
  /** `success.agentId` values of `task` results naming a `sand-subagent-*` session. */
  subagentIds: string[];
  mtimeMs: number;
}

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

/** The cache file of one pair of roots: its name holds the format version and a hash of the resolved roots. */
export function summaryCacheFile(env: NodeJS.ProcessEnv, roots: GrokBotRoots): string {
  return cacheFileFor(
    env,
    'grok-bot',
    SUMMARY_CACHE_VERSION,
    `${resolve(roots.transcripts)}\0${resolve(roots.agents)}`,
  );
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

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function isJsonlScan(v: unknown): v is JsonlScan {
  return (
    isJsonObject(v) &&
    typeof v.envelope === 'boolean' &&
    isOptionalString(v.title) &&
    isCount(v.messageCount) &&
    Array.isArray(v.subagentIds) &&
    v.subagentIds.every((id) => typeof id === 'string') &&
    isTime(v.mtimeMs)
  );
}

function isLedgerFacts(v: unknown): v is LedgerFacts {
  return (
    isJsonObject(v) &&
    isCount(v.messages) &&
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

class FileSummaryCache implements SummaryCache {
  private readonly doc: CacheDocument<'transcripts' | 'ledgers'>;

  constructor(
    file: string,
    roots: { transcripts: string; agents: string },
    private readonly now: () => number,
  ) {
    this.doc = new CacheDocument(file, { format: FORMAT, version: SUMMARY_CACHE_VERSION, scope: roots }, [
      'transcripts',
      'ledgers',
    ]);
  }

  transcript(path: string, wantSubagentIds: boolean, scan: () => JsonlScan): JsonlScan {
    let sig: StatSignature | undefined;
    try {
      sig = statSignature(path, this.now(), { ctime: true, times: 'ms' });
    } catch {
      return scan(); // the scan reports why the file cannot be read
    }
    if (sig === undefined) return scan();
    const hit = cachedTranscript(this.doc.stored('transcripts', path));
    if (hit !== undefined && hit.sig === sig.sig && (hit.subagentIds || !wantSubagentIds)) {
      this.doc.keep('transcripts', path, hit);
      return wantSubagentIds ? hit.scan : { ...hit.scan, subagentIds: [] };
    }
    const fresh = scan();
    if (!sig.racy)
      this.doc.put('transcripts', path, { sig: sig.sig, subagentIds: wantSubagentIds, scan: fresh });
    return fresh;
  }

  get rememberedLedgers(): number {
    return this.doc.storedCount('ledgers');
  }

  lookupLedger(path: string, needTitle: boolean): LedgerLookup {
    let db: StatSignature | undefined;
    let wal: StatSignature | undefined;
    try {
      db = statSignature(path, this.now(), { ctime: true, times: 'ms' });
      // Every write to the WAL moves its mtime. Its ctime is left out: SQLite running as root
      // chowns the WAL on every open, a reader's included, which moves the ctime and nothing else.
      wal = statSignature(`${path}-wal`, this.now(), { ctime: false, times: 'ms' });
    } catch {
      return forget; // the read reports why the file cannot be read
    }
    if (db === undefined) return forget;
    const sig = `${db.sig}|${wal?.sig ?? '-'}`;
    const hit = cachedLedger(this.doc.stored('ledgers', path));
    if (hit !== undefined && hit.sig === sig && (hit.titled || !needTitle)) {
      this.doc.keep('ledgers', path, hit);
      if (needTitle || hit.facts.title === undefined) return { hit: hit.facts };
      const { title: _unasked, ...facts } = hit.facts;
      return { hit: facts };
    }
    if (db.racy || wal?.racy === true) return forget;
    return {
      remember: (fresh) => {
        if (fresh !== undefined) this.doc.put('ledgers', path, { sig, titled: needTitle, facts: fresh });
      },
    };
  }

  save(): Promise<void> {
    return this.doc.save();
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

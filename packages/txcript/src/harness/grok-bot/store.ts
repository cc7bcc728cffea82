/**
 * The Grok Bot store: discover, load and save against a box's real files.
 *
 * Load cascade (TX-b/c, grok-bot-format.md §7): the JSONL transcript, then the
 * agent's `store.db` ledger (read-only), then the local gateway's `openAgent`.
 * When all three fail, the error names each source and why it failed; a new agent (an empty
 * ledger, no transcript) with no gateway configured is an empty session.
 * Readers never modify a source; `save` writes a new session atomically and
 * never overwrites one.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileAtomic } from '../../fs/atomic.ts';
import type { JsonValue, Transcript } from '../../model/common.ts';
import type { LoadResult, SaveResult, Store } from '../types.ts';
import { discoverGrokBot } from './discover.ts';
import type { GrokBotDiscoverOptions } from './discover.ts';
import type { GatewayClient } from './gateway.ts';
import { ledgerWorkerMode } from './ledger-reads.ts';
import { assertSafeSessionId, UnsafePathError } from '../session-id.ts';
import { grokBotRoots, realPathInside } from './roots.ts';
import type { GrokBotRoots } from './roots.ts';
import { noSummaryCache, openSummaryCache } from './summary-cache.ts';
import type { SummaryCacheOptions } from './summary-cache.ts';
import type { parseGrokBotJsonl } from './text.ts';
import { assertLoadable, TooLargeToLoadError } from '../../fs/memory-budget.ts';
import { errnoCode, errorMessage } from '../../error-text.ts';

/**
 * What reading or writing a session takes (the codecs, SQLite, zod through the ledger and gateway
 * schemas), loaded when a session is loaded or saved: a listing needs none of it.
 */
async function sessionModules() {
  const [codec, gateway, ledgerDb, ledgerEntry, ledgerToCommon, text] = await Promise.all([
    import('./codec.ts'),
    import('./gateway.ts'),
    import('./ledger-db.ts'),
    import('./ledger-entry.ts'),
    import('./ledger-to-common.ts'),
    import('./text.ts'),
  ]);
  return {
    grokBotFromCommon: codec.grokBotFromCommon,
    grokBotToCommon: codec.grokBotToCommon,
    DEFAULT_GATEWAY_TIMEOUT_MS: gateway.DEFAULT_GATEWAY_TIMEOUT_MS,
    GatewayClient: gateway.GatewayClient,
    GatewayError: gateway.GatewayError,
    readGatewayConfig: gateway.readGatewayConfig,
    openLedgerReadOnly: ledgerDb.openLedgerReadOnly,
    parseLedgerEntries: ledgerEntry.parseLedgerEntries,
    ledgerToCommon: ledgerToCommon.ledgerToCommon,
    decodeJsonlBytes: text.decodeJsonlBytes,
    parseGrokBotJsonl: text.parseGrokBotJsonl,
    renderGrokBotJsonl: text.renderGrokBotJsonl,
  };
}
type SessionModules = Awaited<ReturnType<typeof sessionModules>>;

export interface GrokBotStoreOptions {
  /** Gateway call limit; default `TXCRIPT_GROK_BOT_TIMEOUT_MS` or 5000 ms. */
  gatewayTimeoutMs?: number;
  /** Discovery concurrency; default 32. */
  concurrency?: number;
  /** The list's summary cache (summary-cache.ts); `TXCRIPT_NO_CACHE=1` in `env` turns it off. */
  summaryCache?: SummaryCacheOptions;
}

export interface GrokBotStore extends Store {
  readonly roots: GrokBotRoots;
  discover(options?: GrokBotDiscoverOptions): ReturnType<Store['discover']>;
  save(transcript: Transcript): Promise<SaveResult>;
}

/** One source the load cascade tried, and why it gave nothing. */
export interface LoadAttempt {
  source: string;
  reason: string;
}

/** No source had the session; `attempts` lists all three in order. */
export class GrokBotLoadError extends Error {
  override readonly name = 'GrokBotLoadError';
  constructor(
    readonly id: string,
    readonly attempts: LoadAttempt[],
  ) {
    super(
      `grok_bot session ${id}: no conversation found.\n` +
        attempts.map((a, i) => `  ${i + 1}. ${a.source}: ${a.reason}`).join('\n'),
    );
  }
}

/** The first non-blank line of parsed records must be an envelope (TX-a/b/c). */
function startsWithEnvelope(records: ReturnType<typeof parseGrokBotJsonl>['records']): boolean {
  for (const line of records) {
    if (line.kind === 'blank') continue;
    if (line.kind === 'malformed') return false;
    const role = line.json.role;
    return (
      (role === 'user' || role === 'assistant' || role === 'tool') && Object.hasOwn(line.json, 'message')
    );
  }
  return false;
}

/** The entries of an `openAgent` response: a bare array, or under `entries`, `messages` or `transcript` (TX-c). */
export function gatewayEntries(body: JsonValue): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  if (typeof body !== 'object' || body === null) return undefined;
  for (const key of ['entries', 'messages', 'transcript'] as const) {
    const v = body[key];
    if (Array.isArray(v)) return v;
  }
  return undefined;
}

function timeoutFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const v = env.TXCRIPT_GROK_BOT_TIMEOUT_MS;
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  return Number(v);
}

const JSONL_MISSING = 'file missing';
const LEDGER_EMPTY = 'ledger empty';
/** The gateway step when no gateway is configured at all (gateway.ts, kind `none`): why. */
interface NoGateway {
  noGateway: string;
}

export function createGrokBotStore(
  env: NodeJS.ProcessEnv = process.env,
  options: GrokBotStoreOptions = {},
): GrokBotStore {
  const roots = grokBotRoots(env);

  async function fromJsonl(m: SessionModules, id: string): Promise<LoadResult | string> {
    const dir = join(roots.transcripts, id);
    const path = join(dir, `${id}.jsonl`);
    try {
      await realPathInside(roots.transcripts, dir);
    } catch (e) {
      if (e instanceof UnsafePathError) throw e;
      return errnoCode(e) === 'ENOENT' ? JSONL_MISSING : `cannot open: ${errorMessage(e)}`;
    }
    let bytes: Buffer;
    let birth: number;
    try {
      const info = await stat(path);
      birth = info.birthtimeMs > 0 ? info.birthtimeMs : info.mtimeMs;
      assertLoadable(path, info.size);
      bytes = await readFile(path);
    } catch (e) {
      if (e instanceof TooLargeToLoadError) throw e; // the session is there: another source would hide why
      return errnoCode(e) === 'ENOENT' ? JSONL_MISSING : `cannot read: ${errorMessage(e)}`;
    }
    const decoded = m.decodeJsonlBytes(bytes, path);
    const parsed = m.parseGrokBotJsonl(decoded.text, path);
    if (!startsWithEnvelope(parsed.records)) return 'first record is not a {role, message} envelope';
    const untimed = new Set<number>();
    const times = userMessageTimes(m, join(roots.agents, id, 'store.db'));
    const transcript = m.grokBotToCommon(parsed.records, {
      sessionId: id,
      timestamp: new Date(birth).toISOString(),
      untimed,
      ...(times.size > 0 ? { addressTime: (address: string) => isoOf(times.get(address)) } : {}),
    });
    return { transcript, source: path, warnings: [...decoded.warnings, ...parsed.warnings], untimed };
  }

  /** User message times from the agent's ledger (none when it has no readable store.db). */
  function userMessageTimes(m: SessionModules, path: string): Map<string, number> {
    let ledger;
    try {
      ledger = m.openLedgerReadOnly(path);
    } catch {
      return new Map();
    }
    try {
      return ledger.userMessageTimes();
    } catch {
      return new Map(); // a locked or damaged ledger only costs the times
    } finally {
      ledger.close();
    }
  }

  function fromLedger(m: SessionModules, id: string): LoadResult | string {
    const path = join(roots.agents, id, 'store.db');
    let read;
    try {
      const ledger = m.openLedgerReadOnly(path);
      try {
        read = ledger.readLedgerEntries();
      } finally {
        ledger.close();
      }
    } catch (e) {
      const code = errnoCode(e);
      return code === 'SQLITE_CANTOPEN' || code === 'ENOENT' ? 'no store.db' : errorMessage(e);
    }
    if (read.rows.length === 0) {
      return read.warnings.length > 0
        ? `ledger has no readable entries (${read.warnings.length} skipped)`
        : LEDGER_EMPTY;
    }
    const { transcript, warnings, untimed } = m.ledgerToCommon(
      read.rows.map((r) => r.entry),
      { sessionId: id, source: path },
    );
    return { transcript, source: path, warnings: [...read.warnings, ...warnings], untimed };
  }

  /** `noGateway` when none is configured: there is nothing more to ask. */
  async function fromGateway(m: SessionModules, id: string): Promise<LoadResult | string | NoGateway> {
    const timeoutMs = options.gatewayTimeoutMs ?? timeoutFromEnv(env) ?? m.DEFAULT_GATEWAY_TIMEOUT_MS;
    let client: GatewayClient;
    try {
      client = new m.GatewayClient({ ...(await m.readGatewayConfig(env)), timeoutMs });
    } catch (e) {
      return e instanceof m.GatewayError && e.kind === 'none' ? { noGateway: e.message } : errorMessage(e);
    }
    let body: JsonValue;
    try {
      body = await client.call('openAgent', { id });
    } catch (e) {
      return errorMessage(e);
    }
    const endpoint = client.endpoint('openAgent');
    const values = gatewayEntries(body);
    if (values === undefined) {
      return `POST ${endpoint}: unexpected response (expected an array, or {entries|messages|transcript})`;
    }
    const { entries, warnings } = m.parseLedgerEntries(values, endpoint);
    if (entries.length === 0) return `POST ${endpoint}: no conversation entries in the response`;
    const converted = m.ledgerToCommon(entries, { sessionId: id, source: endpoint });
    return {
      transcript: converted.transcript,
      source: endpoint,
      warnings: [...warnings, ...converted.warnings],
      untimed: converted.untimed,
    };
  }

  /** A new agent's session: no messages, dated by its ledger file. */
  async function emptySession(id: string): Promise<LoadResult> {
    const path = join(roots.agents, id, 'store.db');
    const info = await stat(path);
    const born = info.birthtimeMs > 0 ? info.birthtimeMs : info.mtimeMs;
    return {
      transcript: { meta: { id, timestamp: new Date(born).toISOString() }, messages: [] },
      source: path,
      warnings: [],
      untimed: new Set(),
    };
  }

  async function load(id: string): Promise<LoadResult> {
    assertSafeSessionId(id);
    const m = await sessionModules();
    const attempts: LoadAttempt[] = [];
    const jsonl = await fromJsonl(m, id);
    if (typeof jsonl !== 'string') return jsonl;
    attempts.push({ source: join(roots.transcripts, id, `${id}.jsonl`), reason: jsonl });
    const ledger = fromLedger(m, id);
    if (typeof ledger !== 'string') return ledger;
    attempts.push({ source: join(roots.agents, id, 'store.db'), reason: ledger });
    const gateway = await fromGateway(m, id);
    if (typeof gateway !== 'string' && 'noGateway' in gateway) {
      // A new agent (its folder and an empty ledger, no transcript yet) and no gateway that could
      // know more: an empty session, not a failure.
      if (jsonl === JSONL_MISSING && ledger === LEDGER_EMPTY) return await emptySession(id);
      attempts.push({ source: 'gateway openAgent', reason: gateway.noGateway });
      throw new GrokBotLoadError(id, attempts);
    }
    if (typeof gateway !== 'string') return gateway;
    attempts.push({ source: 'gateway openAgent', reason: gateway });
    throw new GrokBotLoadError(id, attempts);
  }

  async function save(transcript: Transcript): Promise<SaveResult> {
    const id = transcript.meta.id;
    assertSafeSessionId(id);
    const dir = join(roots.transcripts, id);
    const path = join(dir, `${id}.jsonl`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await realPathInside(roots.transcripts, dir);
    const { grokBotFromCommon, renderGrokBotJsonl } = await sessionModules();
    const text = renderGrokBotJsonl(grokBotFromCommon(transcript));
    await createFileAtomic(path, text);
    return { id, locator: path };
  }

  return {
    roots,
    discover: (discoverOptions = {}) =>
      discoverGrokBot(roots, {
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        summaryCache:
          discoverOptions.cache === false
            ? noSummaryCache
            : openSummaryCache(env, roots, options.summaryCache),
        ledgerWorker: { mode: ledgerWorkerMode(env) },
        ...discoverOptions,
      }),
    load,
    save,
  };
}

function isoOf(ms: number | undefined): string | undefined {
  return ms === undefined || ms <= 0 ? undefined : new Date(ms).toISOString();
}

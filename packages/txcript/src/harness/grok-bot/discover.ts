/**
 * Session discovery (sendbox decision C8): the union of
 * `agents/<id>/profile.json` and `agent-transcripts/<id>/<id>.jsonl` whose
 * first non-blank record is an envelope.
 *
 * Listing must stay fast on boxes with thousands of agents, so nothing here
 * parses a whole transcript: a JSONL file is streamed once in chunks, only the
 * first line (envelope check), the first few user records (title) and, when
 * subagent folders exist, the lines mentioning `sand-subagent-` (C7 parent
 * link) are decoded; everything else is a newline count. Profile-only agents
 * cost one cheap query on their ledger; when there are many, a worker thread
 * reads them while the transcripts are scanned (ledger-reads.ts). With a
 * summary cache (summary-cache.ts), a transcript or ledger whose files have
 * not changed since an earlier run is not read at all.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { normalize } from 'node:path';
import { entryPath } from '../../fs/dir.ts';
import type { DiscoverOptions, DiscoverResult, SessionSummary, Warning } from '../types.ts';
import { epochMs, startLedgerReads } from './ledger-reads.ts';
import type { LedgerFacts, LedgerOutcome, LedgerRequest, LedgerWorkerOptions } from './ledger-reads.ts';
import { isSafeSessionId } from '../session-id.ts';
import { realPathInside } from './roots.ts';
import type { GrokBotRoots } from './roots.ts';
import { noSummaryCache } from './summary-cache.ts';
import type { JsonlScan, SummaryCache } from './summary-cache.ts';
import { isJsonObject as isObject } from '../../model/json.ts';
import { titleFromUserText } from './title.ts';
import { errnoCode, errorMessage } from '../../error-text.ts';

export const GROK_BOT_HARNESS_ID = 'grok_bot';
const SUBAGENT_PREFIX = 'sand-subagent-';
const SUBAGENT_MARKER = Buffer.from(SUBAGENT_PREFIX);
/** The roles the codec reads messages of, as the box writes them (compact JSON). */
const CONVERSATION_ROLES = ['"role":"user"', '"role":"assistant"', '"role":"tool"'].map((r) =>
  Buffer.from(r),
);
const CHUNK_BYTES = 256 * 1024;
/** Non-blank lines searched for a title before giving up. */
const TITLE_SCAN_LINES = 200;
const DEFAULT_CONCURRENCY = 32;
/** Folders scanned between two turns of the event loop. */
const YIELD_EVERY = 200;

export interface GrokBotDiscoverOptions extends DiscoverOptions {
  /** Folders scanned at once. Default 32. */
  concurrency?: number;
  /** Facts remembered from earlier runs, asked before any source is read. Default: none, read everything. */
  summaryCache?: SummaryCache;
  /** Where the ledgers of profile-only agents are read (ledger-reads.ts). Default: on a worker when many. */
  ledgerWorker?: LedgerWorkerOptions;
}

const ENVELOPE_ROLES = new Set(['user', 'assistant', 'tool']);

function isEnvelope(v: unknown): boolean {
  return (
    isObject(v) && ENVELOPE_ROLES.has((v as { role?: unknown }).role as string) && 'message' in (v as object)
  );
}

function userTitle(rec: unknown): string | undefined {
  if (!isObject(rec)) return undefined;
  const r = rec as { role?: unknown; message?: unknown };
  if (r.role !== 'user' || !isObject(r.message)) return undefined;
  const content = (r.message as { content?: unknown }).content;
  const blocks =
    typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  for (const b of blocks as unknown[]) {
    if (!isObject(b)) continue;
    const block = b as { type?: unknown; text?: unknown };
    if (block.type !== 'text' || typeof block.text !== 'string') continue;
    const title = titleFromUserText(block.text);
    if (title !== undefined) return title;
  }
  return undefined;
}

/**
 * C7: a parent's `task` result names its child session in `success.agentId`; a child that failed
 * (`failure`) or whose call a crash interrupted (`error`, as sendbox's turn closer writes it) is
 * named the same way under its envelope.
 */
function taskChildIds(rec: unknown, into: string[]): void {
  const content = (rec as { message?: { content?: unknown } } | undefined)?.message?.content;
  if (!Array.isArray(content)) return;
  for (const b of content as unknown[]) {
    const block = b as { type?: unknown; name?: unknown; result?: Record<string, unknown> } | null;
    if (block === null || typeof block !== 'object' || block.type !== 'tool_result' || block.name !== 'task')
      continue;
    for (const key of TASK_ENVELOPES) {
      const agentId = (block.result?.[key] as { agentId?: unknown } | undefined)?.agentId;
      if (typeof agentId === 'string' && agentId.startsWith(SUBAGENT_PREFIX)) into.push(agentId);
    }
  }
}

const TASK_ENVELOPES = ['success', 'failure', 'error'] as const;

function isBlankByte(c: number): boolean {
  // JSON whitespace, plus the bytes of a UTF-8 byte-order mark.
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a || c === 0xef || c === 0xbb || c === 0xbf;
}

/** Stream a JSONL file once; see JsonlScan. Stops early when the first line is not an envelope. */
export async function scanJsonl(path: string, wantSubagentIds: boolean): Promise<JsonlScan> {
  return Promise.resolve(scanJsonlSync(path, wantSubagentIds));
}

/**
 * The scan with synchronous reads: listing reads thousands of small files,
 * and a synchronous read costs far less CPU than a thread-pool round trip.
 */
function scanJsonlSync(path: string, wantSubagentIds: boolean): JsonlScan {
  const fd = openSync(path, 'r');
  try {
    const info = fstatSync(fd);
    const scan: JsonlScan = { envelope: false, messageCount: 0, subagentIds: [], mtimeMs: info.mtimeMs };
    let firstSeen = false;
    let stop = false;
    let titleDone = false;
    /** Non-blank lines so far. */
    let records = 0;

    const handleLine = (
      parts: Buffer[],
      data: Buffer,
      start: number,
      end: number,
      hasMarker: boolean,
    ): void => {
      // Without copying: the line's last non-blank byte (0 when the line is blank).
      const pieces = parts.length > 0 ? [...parts, data.subarray(start, end)] : [data.subarray(start, end)];
      let lastByte = 0;
      outer: for (let p = pieces.length - 1; p >= 0; p--) {
        const piece = pieces[p]!;
        for (let i = piece.length - 1; i >= 0; i--) {
          if (!isBlankByte(piece[i]!)) {
            lastByte = piece[i]!;
            break outer;
          }
        }
      }
      if (lastByte === 0) return;
      records++;
      // A whole record of a role (see JsonlScan.messageCount): what the codec makes a message of.
      if (lastByte === 0x7d) {
        const whole = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
        if (CONVERSATION_ROLES.some((role) => whole.indexOf(role) !== -1)) scan.messageCount++;
      }
      const wantTitle = !titleDone && records <= TITLE_SCAN_LINES;
      if (firstSeen && !wantTitle && !hasMarker) return;
      const text =
        pieces.length === 1 ? data.toString('utf8', start, end) : Buffer.concat(pieces).toString('utf8');
      let rec: unknown;
      try {
        rec = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch {
        rec = undefined;
      }
      if (!firstSeen) {
        firstSeen = true;
        scan.envelope = isEnvelope(rec);
        if (!scan.envelope) {
          stop = true;
          return;
        }
      }
      if (wantTitle) {
        const title = userTitle(rec);
        if (title !== undefined) {
          scan.title = title;
          titleDone = true;
        }
      }
      if (hasMarker) taskChildIds(rec, scan.subagentIds);
    };

    // Bytes of a line that started in an earlier chunk (lines may be longer than a chunk).
    let pending: Buffer[] = [];
    const spansMarker = (parts: Buffer[], data: Buffer, end: number): boolean =>
      wantSubagentIds && Buffer.concat([...parts, data.subarray(0, end)]).indexOf(SUBAGENT_MARKER) !== -1;
    // Read up to the size seen at open: no extra read to learn about EOF, and a file growing meanwhile stays consistent.
    let remaining = info.size;
    while (remaining > 0) {
      const want = Math.min(CHUNK_BYTES, remaining);
      const chunk = Buffer.allocUnsafe(want);
      const bytesRead = readSync(fd, chunk, 0, want, null);
      if (bytesRead === 0) break;
      remaining -= bytesRead;
      const data = chunk.subarray(0, bytesRead);
      let pos = 0;
      let marker = wantSubagentIds ? data.indexOf(SUBAGENT_MARKER) : -1;
      for (;;) {
        const nl = data.indexOf(0x0a, pos);
        if (nl === -1) break;
        let hasMarker: boolean;
        if (pending.length > 0) hasMarker = spansMarker(pending, data, nl);
        else {
          if (marker !== -1 && marker < pos) marker = data.indexOf(SUBAGENT_MARKER, pos);
          hasMarker = marker !== -1 && marker < nl;
        }
        handleLine(pending, data, pos, nl, hasMarker);
        if (stop) return scan;
        pending = [];
        pos = nl + 1;
      }
      if (pos < data.length) pending.push(data.subarray(pos));
    }
    if (pending.length > 0) {
      const last = Buffer.concat(pending);
      handleLine([], last, 0, last.length, spansMarker([], last, last.length));
    }
    return scan;
  } finally {
    closeSync(fd);
  }
}

/** The profile fields a listing reads; built (and zod loaded) only for a profile that fails the hand check. */
async function profileSchema() {
  const { z } = await import('zod');
  return z.looseObject({
    name: z.string().optional(),
    title: z.string().optional(),
    description: z.string().optional(),
  });
}

const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * The profile's name, checked by hand: the same test as profileSchema, without
 * zod's cost on every agent. A profile that fails it goes through the schema,
 * which says what is wrong.
 */
async function profileName(value: unknown): Promise<{ name?: string } | { problem: string }> {
  if (
    isObject(value) &&
    optionalString(value.name) &&
    optionalString(value.title) &&
    optionalString(value.description)
  )
    return typeof value.name === 'string' ? { name: value.name } : {};
  const parsed = (await profileSchema()).safeParse(value);
  if (parsed.success) return parsed.data.name !== undefined ? { name: parsed.data.name } : {};
  return { problem: `unexpected profile shape: ${parsed.error.issues[0]?.message}` };
}

interface AgentScan {
  id: string;
  dir: string;
  name?: string;
  /** The profile's own `updatedAt` (else `createdAt`), epoch ms or ISO: a real time when the ledger has none. */
  profileMs?: number;
  messageCount: number;
  lastActivityMs?: number;
  title?: string;
  /** What was found wrong with this agent, in order (reported after every transcript warning). */
  warnings: Warning[];
  /** A ledger read not made yet, and how to remember its facts. */
  pending?: { request: LedgerRequest; remember: (facts: LedgerFacts | undefined) => void };
}

async function listDir(path: string, warnings: Warning[]): Promise<Dirent[]> {
  try {
    return await readdir(path, { withFileTypes: true });
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT')
      warnings.push({ source: path, message: `cannot list folder: ${errorMessage(e)}` });
    return [];
  }
}

/** Bounded-concurrency map that keeps input order. */
async function mapPool<T, R>(
  items: readonly T[],
  limit: number,
  f: (item: T) => Promise<R>,
  onDone: (result: R) => void,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let sinceYield = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      const result = await f(items[i]!);
      out[i] = result;
      onDone(result);
      // Scans read synchronously; let timers (the progress display) run now and then.
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** An agent's folder and profile (its name); undefined when it is no agent. Ledgers are read later. */
async function scanProfile(
  roots: GrokBotRoots,
  entry: Dirent,
  warnings: Warning[],
): Promise<AgentScan | undefined> {
  const id = entry.name;
  if (!isSafeSessionId(id)) return undefined;
  const dir = entryPath(roots.agents, id);
  if (entry.isSymbolicLink()) {
    try {
      await realPathInside(roots.agents, dir);
    } catch (e) {
      warnings.push({ source: dir, message: `skipped: ${errorMessage(e)}` });
      return undefined;
    }
  } else if (!entry.isDirectory()) return undefined;
  const profilePath = entryPath(dir, 'profile.json');
  let profileText: string;
  try {
    profileText = readFileSync(profilePath, 'utf8');
  } catch (e) {
    const code = errnoCode(e);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      warnings.push({ source: profilePath, message: `cannot read profile: ${errorMessage(e)}` });
    }
    return undefined;
  }
  const scan: AgentScan = { id, dir, messageCount: 0, warnings };
  try {
    const json: unknown = JSON.parse(profileText);
    const profile = await profileName(json);
    if (isObject(json)) scan.profileMs = epochMs(json.updatedAt) ?? epochMs(json.createdAt);
    if ('problem' in profile) warnings.push({ source: profilePath, message: profile.problem });
    else if (profile.name !== undefined && profile.name.trim() !== '') scan.name = profile.name.trim();
  } catch (e) {
    warnings.push({ source: profilePath, message: `profile is not valid JSON: ${errorMessage(e)}` });
  }
  return scan;
}

/** A profile-only agent's ledger facts: from the cache now, else `pending` until read (see settleLedger). */
function lookupLedger(scan: AgentScan, cache: SummaryCache): void {
  const request: LedgerRequest = {
    path: entryPath(scan.dir, 'store.db'),
    needTitle: scan.name === undefined,
  };
  const lookup = cache.lookupLedger(request.path, request.needTitle);
  if ('hit' in lookup) applyLedger(scan, request.path, { facts: lookup.hit });
  else scan.pending = { request, remember: lookup.remember };
}

/** A pending read's outcome: remembered by the cache when it is facts, and given to the agent. */
function settleLedger(scan: AgentScan, outcome: LedgerOutcome): void {
  const { request, remember } = scan.pending!;
  if (!('error' in outcome)) remember(outcome.facts);
  applyLedger(scan, request.path, outcome);
  delete scan.pending;
}

/**
 * Count, activity and title from the ledger; when the ledger gives no time, the profile's own
 * time, else its mtime. A time at or before the Unix epoch is no time (a fresh box writes 0).
 */
function applyLedger(scan: AgentScan, ledgerPath: string, outcome: LedgerOutcome): void {
  if ('error' in outcome)
    scan.warnings.push({ source: ledgerPath, message: `ledger not read: ${outcome.error}` });
  else if (outcome.facts !== undefined) {
    scan.messageCount = outcome.facts.messages;
    if (outcome.facts.lastActivityMs !== undefined) scan.lastActivityMs = outcome.facts.lastActivityMs;
    if (outcome.facts.title !== undefined) scan.title = outcome.facts.title;
  }
  scan.lastActivityMs ??= scan.profileMs;
  if (scan.lastActivityMs === undefined) {
    try {
      scan.lastActivityMs = statSync(entryPath(scan.dir, 'profile.json')).mtimeMs;
    } catch {
      // the profile was readable a moment ago; without a time the row still lists
    }
  }
}

interface TranscriptScan extends JsonlScan {
  id: string;
  path: string;
}

async function scanTranscriptDir(
  roots: GrokBotRoots,
  entry: Dirent,
  wantSubagentIds: boolean,
  cache: SummaryCache,
  warnings: Warning[],
): Promise<TranscriptScan | undefined> {
  const id = entry.name;
  const dir = entryPath(roots.transcripts, id);
  if (!isSafeSessionId(id)) return undefined;
  if (entry.isSymbolicLink()) {
    try {
      await realPathInside(roots.transcripts, dir);
    } catch (e) {
      const message = errnoCode(e) === 'ENOENT' ? 'broken symlink; skipped' : `skipped: ${errorMessage(e)}`;
      warnings.push({ source: dir, message });
      return undefined;
    }
  } else if (!entry.isDirectory()) {
    warnings.push({ source: dir, message: 'not a session folder (expected a directory); skipped' });
    return undefined;
  }
  const path = entryPath(dir, `${id}.jsonl`);
  try {
    const scan = cache.transcript(path, wantSubagentIds, () => scanJsonlSync(path, wantSubagentIds));
    if (!scan.envelope) return undefined; // TX-a/b/c: not a transcript
    return { ...scan, id, path };
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ENOENT') return undefined; // a folder without its JSONL (only sidecars) is no session
    warnings.push({
      source: code === 'EACCES' ? dir : path,
      message: `unreadable; skipped: ${errorMessage(e)}`,
    });
    return undefined;
  }
}

/** A time as RFC 3339; none for the Unix epoch or before (a zero someone wrote means "never"). */
function iso(ms: number | undefined): string | undefined {
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return undefined;
  // Rounded as node:fs rounds a Stats date, so a file time reads the same here as in `stat`.
  return new Date(Math.round(ms)).toISOString();
}

/** List every Grok Bot session under the roots. Never throws for one bad folder. */
export async function discoverGrokBot(
  given: GrokBotRoots,
  options: GrokBotDiscoverOptions = {},
): Promise<DiscoverResult> {
  // Normalised once, so that each agent's paths are joined without path.join (fs/dir.ts: entryPath).
  const roots = { ...given, agents: normalize(given.agents), transcripts: normalize(given.transcripts) };
  const warnings: Warning[] = [];
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const cache = options.summaryCache ?? noSummaryCache;
  const [transcriptDirs, agentDirs] = await Promise.all([
    listDir(roots.transcripts, warnings),
    listDir(roots.agents, warnings),
  ]);
  const total = transcriptDirs.length + agentDirs.length;
  let done = 0;
  const progress = (): void => {
    done++;
    options.onProgress?.(done, total);
  };
  const wantSubagentIds = transcriptDirs.some((d) => d.name.startsWith(SUBAGENT_PREFIX));
  const transcriptNames = new Set(transcriptDirs.map((d) => d.name));
  // Profiles first, each agent without a transcript folder asking the cache for its ledger's facts;
  // the ledgers the cache cannot serve are read (on a worker when many) while the transcripts are
  // scanned. The worker starts now, so that its start-up overlaps the profiles.
  const profileOnly = agentDirs.filter((d) => !transcriptNames.has(d.name)).length;
  const reads = startLedgerReads(Math.max(0, profileOnly - cache.rememberedLedgers), options.ledgerWorker);
  const agentWarnings = agentDirs.map((): Warning[] => []);
  const agents = (
    await mapPool(
      agentDirs.map((entry, i) => ({ entry, warnings: agentWarnings[i]! })),
      concurrency,
      async ({ entry, warnings: mine }) => {
        const scan = await scanProfile(roots, entry, mine);
        if (scan !== undefined && !transcriptNames.has(scan.id)) lookupLedger(scan, cache);
        return scan;
      },
      (scan) => {
        if (scan?.pending === undefined) progress(); // else counted once its ledger is read
      },
    )
  ).filter((a): a is AgentScan => a !== undefined);
  const reading = agents.filter((a) => a.pending !== undefined);
  reads.request(reading.map((a) => a.pending!.request));
  const transcripts = (
    await mapPool(
      transcriptDirs,
      concurrency,
      (d) => scanTranscriptDir(roots, d, wantSubagentIds, cache, warnings),
      progress,
    )
  ).filter((t): t is TranscriptScan => t !== undefined);
  const withJsonl = new Set(transcripts.map((t) => t.id));
  const read = await reads.finish(progress);
  reading.forEach((a, i) => settleLedger(a, read.outcomes[i]!));
  // A transcript folder holding no transcript leaves its agent profile-only (rare: read here).
  for (const a of agents) {
    if (!transcriptNames.has(a.id) || withJsonl.has(a.id)) continue;
    lookupLedger(a, cache);
    if (a.pending !== undefined)
      settleLedger(a, (await import('./ledger-facts.ts')).readLedgerOutcome(a.pending.request));
  }
  warnings.push(...agentWarnings.flat(), ...read.warnings);
  await cache.save();

  const parentOf = new Map<string, string>();
  for (const t of transcripts)
    for (const child of t.subagentIds) if (!parentOf.has(child)) parentOf.set(child, t.id);
  const agentById = new Map(agents.map((a) => [a.id, a]));

  const sessions: SessionSummary[] = [];
  for (const t of transcripts) {
    const agent = agentById.get(t.id);
    const title = agent?.name ?? t.title;
    const parentId = parentOf.get(t.id);
    sessions.push({
      id: t.id,
      harness: GROK_BOT_HARNESS_ID,
      ...(title !== undefined ? { title } : {}),
      messageCount: t.messageCount,
      ...(iso(t.mtimeMs) !== undefined ? { lastActivity: iso(t.mtimeMs) } : {}),
      locator: t.path,
      ...(parentId !== undefined ? { parentId } : {}),
    });
  }
  for (const a of agents) {
    if (withJsonl.has(a.id)) continue;
    const title = a.name ?? a.title;
    const lastActivity = iso(a.lastActivityMs);
    sessions.push({
      id: a.id,
      harness: GROK_BOT_HARNESS_ID,
      ...(title !== undefined ? { title } : {}),
      messageCount: a.messageCount,
      ...(lastActivity !== undefined ? { lastActivity } : {}),
      locator: a.dir,
    });
  }
  // Code-unit order, as the list sorts: localeCompare's first call sets up an ICU collator, which
  // costs a listing more than the sort itself.
  const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  sessions.sort((x, y) => byCodeUnits(y.lastActivity ?? '', x.lastActivity ?? '') || byCodeUnits(x.id, y.id));
  return { sessions, warnings };
}

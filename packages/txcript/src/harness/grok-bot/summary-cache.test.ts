import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  T0,
  boxPaths,
  conversation,
  ledgerConversation,
  line,
  userRecord,
  writeJsonl,
  writeLedger,
  writeProfile,
} from '../../../test/fixtures/grok-bot/generate.ts';
import type { BoxPaths } from '../../../test/fixtures/grok-bot/generate.ts';
import { hashTree } from '../../../test/fixtures/grok-bot/hash-tree.ts';
import type { DiscoverResult } from '../types.ts';
import { openLedgerForWrite, openLedgerReadOnly } from './ledger-db.ts';
import { grokBotRoots } from './roots.ts';
import { createGrokBotStore } from './store.ts';
import { SUMMARY_CACHE_VERSION, summaryCacheFile } from './summary-cache.ts';
import { RACY_WINDOW_MS } from '../summary-cache-file.ts';
import type { SummaryCacheOptions } from './summary-cache.ts';

/** The cache file as the tests read and tamper with it. */
interface CacheJson {
  version: number;
  transcripts: Record<string, { sig: string; subagentIds: boolean; scan: Record<string, unknown> }>;
  ledgers: Record<string, { sig: string; titled: boolean; facts: Record<string, unknown> }>;
}

const JSONL = 'agent-jsonl';
const LEDGER = 'agent-ledger';
const NAMELESS = 'agent-nameless';

let home: string;
let box: BoxPaths;
let jsonlPath: string;
let ledgerPath: string;
let namelessPath: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'grok-summary-cache-'));
  box = boxPaths(home);
  jsonlPath = writeJsonl(box, JSONL, conversation('what is in the jsonl').join('\n') + '\n');
  writeProfile(box, LEDGER, { name: 'Ledger Bot' });
  ledgerPath = writeLedger(box, LEDGER, ledgerConversation('from the ledger'));
  writeProfile(box, NAMELESS, { description: 'no name' });
  namelessPath = writeLedger(box, NAMELESS, ledgerConversation('the nameless question'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** A clock well past every file time: nothing is within the racy window. */
const settled: SummaryCacheOptions = { now: () => Date.now() + 10 * RACY_WINDOW_MS };

function list(
  env: NodeJS.ProcessEnv = box.env,
  options: { cache?: boolean; clock?: SummaryCacheOptions } = {},
): Promise<DiscoverResult> {
  return createGrokBotStore(env, { summaryCache: options.clock ?? settled }).discover(
    options.cache === false ? { cache: false } : {},
  );
}

const cacheFile = (env: NodeJS.ProcessEnv = box.env): string => summaryCacheFile(env, grokBotRoots(env));
const readCache = (): CacheJson => JSON.parse(readFileSync(cacheFile(), 'utf8')) as CacheJson;
const readCacheIfAny = (): CacheJson | undefined => (existsSync(cacheFile()) ? readCache() : undefined);
const writeCache = (c: CacheJson): void => writeFileSync(cacheFile(), JSON.stringify(c));
const byId = (r: DiscoverResult, id: string) => r.sessions.find((s) => s.id === id);

describe('grok_bot summary cache', () => {
  it('serves the facts of unchanged sources from the cache on the next list', async () => {
    const fresh = await list();
    expect(await list()).toEqual(fresh);
    expect(await list(box.env, { cache: false })).toEqual(fresh);
    // Tampered entries whose signatures still match are served as they are: proof nothing was re-read.
    const c = readCache();
    c.transcripts[jsonlPath]!.scan.messageCount = 999;
    c.ledgers[ledgerPath]!.facts.messages = 777;
    c.ledgers[namelessPath]!.facts.title = 'from the cache';
    writeCache(c);
    const cached = await list();
    expect(byId(cached, JSONL)?.messageCount).toBe(999);
    expect(byId(cached, LEDGER)?.messageCount).toBe(777);
    expect(byId(cached, NAMELESS)?.title).toBe('from the cache');
  });

  it('re-reads a JSONL that grew by a line', async () => {
    expect(byId(await list(), JSONL)?.messageCount).toBe(4);
    appendFileSync(jsonlPath, userRecord('one more') + '\n');
    expect(byId(await list(), JSONL)?.messageCount).toBe(5);
  });

  it('re-reads a ledger whose WAL-mode writer changed only the -wal file', async () => {
    expect(byId(await list(), LEDGER)).toMatchObject({
      messageCount: 3,
      lastActivity: new Date(T0 + 1000).toISOString(),
    });
    const before = statSync(ledgerPath, { bigint: true });
    const writer = openLedgerForWrite(ledgerPath);
    try {
      writer.appendEntry({
        id: 't1u',
        kind: 'message',
        role: 'user',
        content: 'later',
        timestampMs: T0 + 60_000,
      });
      const after = statSync(ledgerPath, { bigint: true });
      expect([after.ino, after.size, after.mtimeNs, after.ctimeNs]).toEqual([
        before.ino,
        before.size,
        before.mtimeNs,
        before.ctimeNs,
      ]);
      expect(statSync(`${ledgerPath}-wal`).size).toBeGreaterThan(0);
      expect(byId(await list(), LEDGER)).toMatchObject({
        messageCount: 4,
        lastActivity: new Date(T0 + 60_000).toISOString(),
      });
    } finally {
      writer.close(); // checkpoints and removes the WAL: another change the next list must see
    }
    expect(byId(await list(), LEDGER)?.messageCount).toBe(4);
  });

  it('serves a ledger whose WAL only had its ctime moved (SQLite as root chowns the WAL it opens)', async () => {
    openLedgerReadOnly(ledgerPath).close(); // leaves an empty store.db-wal behind
    const wal = statSync(`${ledgerPath}-wal`);
    expect(wal.size).toBe(0);
    await list();
    const c = readCache();
    c.ledgers[ledgerPath]!.facts.messages = 777;
    writeCache(c);
    await new Promise((resolve) => setTimeout(resolve, 5));
    chmodSync(`${ledgerPath}-wal`, wal.mode); // same mode: only the ctime moves
    expect(statSync(`${ledgerPath}-wal`).ctimeMs).not.toBe(wal.ctimeMs);
    expect(byId(await list(), LEDGER)?.messageCount).toBe(777);
  });

  it('re-reads a file replaced by another of the same size and mtime (another inode)', async () => {
    const id = 'agent-replaced';
    const path = writeJsonl(box, id, userRecord('alpha question') + '\n');
    const stamp = new Date('2026-01-02T03:04:05Z');
    utimesSync(path, stamp, stamp);
    expect(byId(await list(), id)?.title).toBe('alpha question');
    const temp = `${path}.new`;
    writeFileSync(temp, userRecord('omega question') + '\n');
    utimesSync(temp, stamp, stamp);
    renameSync(temp, path);
    const before = readCache().transcripts[path]!.sig.split(':');
    const now = statSync(path);
    expect([String(now.size), String(now.mtimeMs)]).toEqual([before[2], before[3]]);
    expect(String(now.ino)).not.toBe(before[1]);
    expect(byId(await list(), id)?.title).toBe('omega question');
  });

  it('does not answer a request for subagent ids with a scan made without them', async () => {
    const child = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-000000000001';
    const parent = writeJsonl(
      box,
      'agent-parent',
      [
        ...conversation('delegate'),
        line({
          role: 'tool',
          message: {
            content: [{ type: 'tool_result', name: 'task', result: { success: { agentId: child } } }],
          },
        }),
      ].join('\n') + '\n',
    );
    await list(); // no subagent folder yet: scanned without looking for ids
    expect(readCache().transcripts[parent]!.subagentIds).toBe(false);
    writeJsonl(box, child, conversation('the subtask').join('\n') + '\n');
    expect(byId(await list(), child)?.parentId).toBe('agent-parent');
    expect(readCache().transcripts[parent]!.subagentIds).toBe(true);
  });

  it("looks for the ledger's title once the profile loses its name, and drops it when the name is back", async () => {
    expect(byId(await list(), LEDGER)?.title).toBe('Ledger Bot');
    writeProfile(box, LEDGER, { description: 'renamed away' });
    expect(byId(await list(), LEDGER)?.title).toBe('from the ledger');
    writeProfile(box, LEDGER, { name: 'Named Again' });
    expect(byId(await list(), LEDGER)?.title).toBe('Named Again');
  });

  it('does not remember a source changed within the racy window of its stat', async () => {
    const changed = Math.max(statSync(jsonlPath).ctimeMs, statSync(ledgerPath).ctimeMs);
    await list(box.env, { clock: { now: () => changed + RACY_WINDOW_MS / 4 } });
    const racy = readCacheIfAny();
    expect(racy?.transcripts[jsonlPath]).toBeUndefined();
    expect(racy?.ledgers[ledgerPath]).toBeUndefined();
    await list(box.env, { clock: { now: () => changed + RACY_WINDOW_MS + 1 } });
    const settledCache = readCache();
    expect(settledCache.transcripts[jsonlPath]).toBeDefined();
    expect(settledCache.ledgers[ledgerPath]).toBeDefined();
  });

  it('replaces a corrupt cache, or one from another version, without a warning', async () => {
    const fresh = await list();
    expect(fresh.warnings).toEqual([]);
    writeFileSync(cacheFile(), '{"version": 1, "transcripts": {');
    expect(await list()).toEqual(fresh);
    expect(readCache().version).toBe(SUMMARY_CACHE_VERSION);
    expect(Object.keys(readCache().transcripts)).toEqual([jsonlPath]);

    const other = readCache();
    other.version = 0;
    other.transcripts[jsonlPath]!.scan.messageCount = 999;
    writeCache(other);
    expect(await list()).toEqual(fresh);
    expect(readCache().version).toBe(SUMMARY_CACHE_VERSION);

    // An entry of the wrong shape is not served even when its signature matches.
    const bad = readCache();
    bad.transcripts[jsonlPath]!.scan.messageCount = 'many';
    bad.ledgers[ledgerPath]!.facts = { messages: -1 };
    writeCache(bad);
    expect(await list()).toEqual(fresh);
    expect(readCache().transcripts[jsonlPath]!.scan.messageCount).toBe(4);
  });

  it('lists correctly, without a warning, when the cache cannot be read or written', async () => {
    const fresh = await list(box.env, { cache: false });
    // The cache file's place is taken by a folder: unreadable and not replaceable.
    mkdirSync(cacheFile(), { recursive: true });
    expect(await list()).toEqual(fresh);
    // The cache folder's place is taken by a file (root ignores permissions; this stops it too).
    const blocked = join(home, 'blocked');
    writeFileSync(blocked, 'a file');
    const env = { ...box.env, XDG_CACHE_HOME: blocked };
    expect(await list(env)).toEqual(fresh);
    expect(readFileSync(blocked, 'utf8')).toBe('a file');
  });

  it('is bypassed by cache: false and TXCRIPT_NO_CACHE, which neither read nor write it', async () => {
    await list(box.env, { cache: false });
    await list({ ...box.env, TXCRIPT_NO_CACHE: '1' });
    expect(() => statSync(cacheFile())).toThrow(/ENOENT/);

    await list();
    const c = readCache();
    c.transcripts[jsonlPath]!.scan.messageCount = 999;
    c.transcripts['/gone/elsewhere.jsonl'] = c.transcripts[jsonlPath]!; // would be dropped by a write
    writeCache(c);
    const written = readFileSync(cacheFile(), 'utf8');
    expect(byId(await list(box.env, { cache: false }), JSONL)?.messageCount).toBe(4);
    expect(byId(await list({ ...box.env, TXCRIPT_NO_CACHE: '1' }), JSONL)?.messageCount).toBe(4);
    expect(readFileSync(cacheFile(), 'utf8')).toBe(written);
    // `0` does not turn it off.
    expect(byId(await list({ ...box.env, TXCRIPT_NO_CACHE: '0' }), JSONL)?.messageCount).toBe(999);
  });

  it('keeps the cache private: folder 0700 (even one made wider before), file 0600', async () => {
    const dir = join(home, '.cache', 'txcript');
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    await list();
    expect(cacheFile().startsWith(dir)).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(cacheFile()).mode & 0o777).toBe(0o600);
  });

  it('drops the entries of agents that are gone, and writes only when something changed', async () => {
    await list();
    expect(Object.keys(readCache().ledgers).sort()).toEqual([ledgerPath, namelessPath].sort());
    const unchanged = statSync(cacheFile(), { bigint: true });
    await list();
    const again = statSync(cacheFile(), { bigint: true });
    expect([again.ino, again.mtimeNs]).toEqual([unchanged.ino, unchanged.mtimeNs]);

    rmSync(join(box.transcripts, JSONL), { recursive: true });
    rmSync(join(box.agents, LEDGER), { recursive: true });
    const r = await list();
    expect(r.sessions.map((s) => s.id)).toEqual([NAMELESS]);
    const c = readCache();
    expect(c.transcripts).toEqual({});
    expect(Object.keys(c.ledgers)).toEqual([namelessPath]);
  });

  it('reports warnings on every run and never caches a failed read', async () => {
    writeProfile(box, 'agent-bad-profile', {});
    writeFileSync(join(box.agents, 'agent-bad-profile', 'profile.json'), '{ not json');
    const broken = join(writeProfile(box, 'agent-broken-ledger', { name: 'Broken' }), 'store.db');
    writeFileSync(broken, 'SQLite format 3\0 but not really a database'.padEnd(4096, '.'));
    const first = await list();
    expect(first.warnings.map((w) => w.source).sort()).toEqual(
      [join(box.agents, 'agent-bad-profile', 'profile.json'), broken].sort(),
    );
    expect((await list()).warnings).toEqual(first.warnings);
    expect(readCache().ledgers[broken]).toBeUndefined();
  });

  it('never modifies a source', async () => {
    const before = await hashTree(box.agentData);
    await list();
    await list();
    expect(await hashTree(box.agentData)).toEqual(before);
  });

  it('lives under $XDG_CACHE_HOME/txcript (absolute only), else $HOME/.cache/txcript, one file per pair of roots', () => {
    const roots = grokBotRoots(box.env);
    const file = summaryCacheFile(box.env, roots);
    expect(file).toMatch(
      new RegExp(`^${home}/\\.cache/txcript/grok-bot-v${SUMMARY_CACHE_VERSION}-[0-9a-f]{16}\\.json$`),
    );
    expect(summaryCacheFile({ ...box.env, XDG_CACHE_HOME: '/xdg' }, roots)).toMatch(
      new RegExp(`^/xdg/txcript/grok-bot-v${SUMMARY_CACHE_VERSION}-[0-9a-f]{16}\\.json$`),
    );
    expect(summaryCacheFile({ ...box.env, XDG_CACHE_HOME: 'relative' }, roots)).toBe(file);
    const other = grokBotRoots({ ...box.env, TXCRIPT_GROK_BOT_AGENTS: join(home, 'other-agents') });
    expect(summaryCacheFile(box.env, other)).not.toBe(file);
  });
});

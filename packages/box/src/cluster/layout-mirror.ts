/**
 * A cluster's agents in Grok Bot's layout (stores/files/layout.ts: `agents/<id>/profile.json`,
 * `agents/<id>/store.db`, `agent-transcripts/<id>/<id>.jsonl`, and each subagent's
 * `agent-transcripts/sand-subagent-<uuid>/sand-subagent-<uuid>.jsonl`), written from the rows: the
 * ledger rows appended in seq order through txcript's ledger writer (each must get the seq it has in
 * the database, both counting from 1 per agent), the transcript rows (the exact JSONL lines) joined,
 * a subagent's `subagent_transcript` rows likewise, the profile row as profile.json. The one writer
 * of that layout from rows, for two uses:
 *
 * - `sendbox export` (export.ts): every agent once, into a new folder;
 * - a worker's local copy (`SessionFiles`), which txcript reads as it reads a box on files: the
 *   sidebar's message search (search/message-search.ts) and the `sessions` connector
 *   (mcp/sessions-server.ts); txcript lists a subagent's file as a session of its own, its parent
 *   linked, as it does a box on files. It is kept current from the events every worker hears (an
 *   agent's entry, turn state, roster change or task marks it changed) and brought up to date before a search:
 *   only the changed agents are read, and only their rows after what the files already hold.
 *
 * A file written whole (a new agent, or one whose copy does not match what was recorded) is written
 * under a temporary name and renamed, so a reader never sees half of one; later rows are appended
 * in place (a store.db append is one SQLite transaction; a transcript append whose recorded length
 * is not the file's, after a crash, is cut back or written whole again first).
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, rename, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { openLedgerForWrite, type JsonValue, type LedgerWriter } from '@sendbox/txcript';
import type { LedgerEntry } from '@sendbox/protocol';
import type { HostEvent } from '../agent/events.ts';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';
import type { SessionFiles } from '../search/session-files.ts';
import { agentPaths, isSafeAgentId, isSubagentId } from '../stores/files/layout.ts';
import type { Database } from '../stores/postgres/database.ts';
import { transcriptRows, type TranscriptRows } from '../stores/postgres/transcript.ts';

/** Rows read (and appended to a store.db) per round. */
const BATCH = 500;
/**
 * How long after an agent changed its files are brought up to date (changes meanwhile ride along; a
 * search brings them up to date first anyway). Each round appends to every marked agent's store.db
 * on this worker's event loop: at 200 ms, busy agents cost a 3-worker cluster about a third of its
 * accepts per second flat out (bench/cluster.ts, 1,879-2,073/s against 3,174-3,605/s at 1 s).
 */
const MIRROR_DELAY_MS = 1000;

export interface LayoutMirrorOptions {
  db: Database;
  /** Where the layout goes (`agents/` and `agent-transcripts/` under it; made if missing). */
  root: string;
  /** Where what each agent's files hold is kept across restarts; none: in memory (an export). */
  stateDir?: string;
  log?: (line: string) => void;
}

/** What a JSONL file holds: the rows up to `seq`, `bytes` long. */
interface LogMark {
  seq: number;
  bytes: number;
}

/** What an agent's files hold: the rows they were written from. */
interface Mirrored {
  ledgerSeq: number;
  transcriptSeq: number;
  transcriptBytes: number;
  profileVersion: number | null;
  /** Its subagents' files, by child id (absent in records made before they were copied). */
  children?: Record<string, LogMark>;
}

const NOTHING: Mirrored = { ledgerSeq: 0, transcriptSeq: 0, transcriptBytes: 0, profileVersion: null };

export interface MirrorSummary {
  agents: number;
  /** Ledger rows written by this call. */
  entries: number;
  /** Transcript bytes written by this call. */
  transcriptBytes: number;
}

export class LayoutMirror implements SessionFiles {
  readonly transcripts: string;
  readonly agents: string;
  private readonly state = new Map<string, Mirrored>();
  private readonly changed = new Set<string>();
  private readonly removed = new Set<string>();
  /** Every write of the files, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private readonly log: (line: string) => void;

  constructor(private readonly options: LayoutMirrorOptions) {
    this.transcripts = path.join(options.root, 'agent-transcripts');
    this.agents = path.join(options.root, 'agents');
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /**
   * Every agent of the rows written out, and (with a state folder) every agent the rows no longer
   * have removed: at a worker's start, and for an export.
   */
  syncAll(): Promise<MirrorSummary> {
    return this.serial(async () => {
      await ensurePrivateDir(this.options.root);
      await ensurePrivateDir(this.agents);
      await ensurePrivateDir(this.transcripts);
      if (this.options.stateDir) await this.loadState(this.options.stateDir);
      const { db } = this.options;
      const heads = await db.pool.query<{
        agent_id: string;
        ledger: string;
        transcript: string;
        profile: string;
        children: string;
      }>(
        // A subagent's rows are only appended (and go with their agent): their count marks a change.
        `SELECT agent_id, max(ledger) AS ledger, max(transcript) AS transcript, max(profile) AS profile,
                max(children) AS children FROM (
           SELECT agent_id, 0 AS ledger, 0 AS transcript, version AS profile, 0 AS children FROM ${db.table('profiles')}
           UNION ALL SELECT agent_id, max(seq), 0, NULL, 0 FROM ${db.table('ledger')} GROUP BY agent_id
           UNION ALL SELECT agent_id, 0, max(seq), NULL, 0 FROM ${db.table('transcript')} GROUP BY agent_id
           UNION ALL SELECT agent_id, 0, 0, NULL, count(*) FROM ${db.table('subagent_transcript')} GROUP BY agent_id
         ) AS heads GROUP BY agent_id ORDER BY agent_id`,
      );
      const summary: MirrorSummary = { agents: 0, entries: 0, transcriptBytes: 0 };
      const present = new Set<string>();
      for (const row of heads.rows) {
        // A worker stopping does not wait for the rest: it is read at the next start.
        if (this.closed && this.options.stateDir) break;
        present.add(row.agent_id);
        summary.agents += 1;
        const known = this.state.get(row.agent_id);
        const profile = row.profile === null ? null : Number(row.profile);
        if (
          known &&
          known.ledgerSeq === Number(row.ledger) &&
          known.transcriptSeq === Number(row.transcript) &&
          known.profileVersion === profile &&
          childRows(known) === Number(row.children)
        )
          continue;
        let written;
        try {
          written = await this.syncAgent(row.agent_id);
        } catch (error) {
          // An export stops; a worker's copy goes on with the other agents (tried again at its next change).
          if (!this.options.stateDir) throw error;
          this.log(`sessions copy of agent ${row.agent_id}: ${(error as Error).message}`);
          continue;
        }
        summary.entries += written.entries;
        summary.transcriptBytes += written.transcriptBytes;
      }
      if (this.options.stateDir && !this.closed) {
        for (const agentId of [...this.state.keys()]) if (!present.has(agentId)) await this.remove(agentId);
      }
      return summary;
    });
  }

  /** Follows the host: an agent that wrote, changed state or was created, renamed or deleted is brought up to date. */
  observe(event: HostEvent): void {
    if (this.closed) return;
    if (event.type === 'roster' && event.change === 'deleted') {
      this.changed.delete(event.agentId);
      this.removed.add(event.agentId);
    } else if (
      event.type === 'entry' ||
      event.type === 'state' ||
      event.type === 'roster' ||
      // A subagent's step or end: its transcript grew.
      event.type === 'task'
    ) {
      this.changed.add(event.agentId);
    } else {
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.settle().catch((error: unknown) => this.log(`sessions copy: ${(error as Error).message}`));
    }, MIRROR_DELAY_MS);
  }

  /** Resolves once the files hold every change observed before the call. */
  settle(): Promise<void> {
    return this.serial(async () => {
      for (const agentId of [...this.removed]) {
        this.removed.delete(agentId);
        await this.remove(agentId);
      }
      for (const agentId of [...this.changed]) {
        if (this.closed) break;
        this.changed.delete(agentId);
        try {
          await this.syncAgent(agentId);
        } catch (error) {
          // Tried again at its next change; the other agents go on.
          this.log(`sessions copy of agent ${agentId}: ${(error as Error).message}`);
        }
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.chain.catch(() => undefined);
  }

  // -------------------------------------------------------------------------

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The agent's files brought up to its rows; what was written. */
  private async syncAgent(agentId: string): Promise<{ entries: number; transcriptBytes: number }> {
    if (!isSafeAgentId(agentId)) throw new Error(`agent id ${JSON.stringify(agentId)} cannot name a folder`);
    const { db } = this.options;
    const paths = agentPaths(this.options.root, agentId);
    const before = this.state.get(agentId) ?? NOTHING;
    const known: Mirrored = { ...before, children: { ...before.children } };
    await ensurePrivateDir(paths.agentDir);
    await ensurePrivateDir(paths.transcriptDir);
    const profile = await db.pool.query<{ profile: string; version: string }>(
      `SELECT profile, version FROM ${db.table('profiles')} WHERE agent_id = $1`,
      [agentId],
    );
    const row = profile.rows[0];
    if (row && Number(row.version) !== known.profileVersion) {
      const json = JSON.parse(row.profile) as unknown;
      await writeFileAtomic(paths.profile, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o600 });
      known.profileVersion = Number(row.version);
    }
    const entries = await this.syncLedger(agentId, paths.storeDb, known);
    const own: LogMark = { seq: known.transcriptSeq, bytes: known.transcriptBytes };
    let transcriptBytes = await this.syncLog(transcriptRows(db, agentId), paths.jsonl, own);
    known.transcriptSeq = own.seq;
    known.transcriptBytes = own.bytes;
    transcriptBytes += await this.syncChildren(agentId, known);
    if (!row && known.ledgerSeq === 0 && known.transcriptSeq === 0) {
      // No row of it at all: deleted (or never there).
      await this.remove(agentId);
      return { entries, transcriptBytes };
    }
    this.state.set(agentId, known);
    await this.saveState(agentId, known);
    return { entries, transcriptBytes };
  }

  /** Appends the ledger rows after `known.ledgerSeq` (all of them into a new file when it has none, or not those). */
  private async syncLedger(agentId: string, target: string, known: Mirrored): Promise<number> {
    let ledger: LedgerWriter | undefined;
    let temp: string | undefined;
    if (known.ledgerSeq > 0 && (await exists(target))) {
      ledger = openLedgerForWrite(target);
      if (ledger.countEntries() !== known.ledgerSeq) {
        ledger.close();
        ledger = undefined;
      }
    }
    if (!ledger) {
      known.ledgerSeq = 0;
      temp = `${target}.mirror-${randomBytes(6).toString('hex')}`;
      ledger = openLedgerForWrite(temp);
    }
    const { db } = this.options;
    let count = 0;
    try {
      for (;;) {
        const { rows } = await db.pool.query<{ seq: string; id: string; entry: string }>(
          `SELECT seq, id, entry FROM ${db.table('ledger')} WHERE agent_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
          [agentId, known.ledgerSeq, BATCH],
        );
        if (rows.length === 0) break;
        const seqs = ledger.appendEntries(rows.map((row) => JSON.parse(row.entry) as LedgerEntry));
        rows.forEach((row, i) => {
          if (seqs[i] !== Number(row.seq)) {
            throw new Error(
              `agent ${agentId}: ledger row ${row.id} has seq ${row.seq} in the database but got ${seqs[i]} in store.db (the database's seqs have a gap); its store.db was not written`,
            );
          }
        });
        count += rows.length;
        known.ledgerSeq = Number(rows.at(-1)!.seq);
      }
      const kv = await db.pool.query<{ key: string; value: string }>(
        `SELECT key, value FROM ${db.table('ledger_kv')} WHERE agent_id = $1 ORDER BY key`,
        [agentId],
      );
      for (const row of kv.rows) ledger.setKv(row.key, JSON.parse(row.value) as JsonValue);
      ledger.close();
      if (temp) await rename(temp, target);
    } catch (error) {
      ledger.close();
      known.ledgerSeq = 0;
      if (temp) await rm(temp, { force: true });
      throw error;
    } finally {
      if (temp) {
        // WAL mode: closing folds the log into the file; what is left of it goes with the temp name.
        await rm(`${temp}-wal`, { force: true });
        await rm(`${temp}-shm`, { force: true });
      }
    }
    return count;
  }

  /** Each of the agent's subagents' files brought up to its rows (a new child's written whole); the bytes written. */
  private async syncChildren(agentId: string, known: Mirrored): Promise<number> {
    const { db } = this.options;
    const { rows } = await db.pool.query<{ child_id: string; seq: string }>(
      `SELECT child_id, max(seq) AS seq FROM ${db.table('subagent_transcript')} WHERE agent_id = $1 GROUP BY child_id ORDER BY child_id`,
      [agentId],
    );
    const children = (known.children ??= {});
    let bytes = 0;
    for (const row of rows) {
      if (!isSubagentId(row.child_id)) {
        this.log(`sessions copy of agent ${agentId}: subagent id ${JSON.stringify(row.child_id)} skipped`);
        continue;
      }
      const mark = children[row.child_id] ?? { seq: 0, bytes: 0 };
      if (mark.seq === Number(row.seq)) continue;
      const paths = agentPaths(this.options.root, row.child_id);
      await ensurePrivateDir(paths.transcriptDir);
      bytes += await this.syncLog(transcriptRows(db, agentId, row.child_id), paths.jsonl, mark);
      children[row.child_id] = mark;
    }
    return bytes;
  }

  /** Appends a log's rows after `mark.seq`; the whole file again when it is not what was recorded. */
  private async syncLog(rowsOf: TranscriptRows, target: string, mark: LogMark): Promise<number> {
    const size = await stat(target).then(
      (info) => info.size,
      () => null,
    );
    const whole = size === null || size < mark.bytes || mark.seq === 0;
    if (whole) {
      mark.seq = 0;
      mark.bytes = 0;
    } else if (size > mark.bytes) {
      // Appended before a crash, not recorded: cut back to what was.
      await truncate(target, mark.bytes);
    }
    const { db } = this.options;
    const parts: string[] = [];
    let seq = mark.seq;
    const next = rowsOf.key.length + 1;
    for (;;) {
      const { rows } = await db.pool.query<{ seq: string; text: string }>(
        `SELECT seq, text FROM ${rowsOf.table} WHERE ${rowsOf.where} AND seq > $${next} ORDER BY seq LIMIT $${next + 1}`,
        [...rowsOf.key, seq, BATCH],
      );
      if (rows.length === 0) break;
      for (const row of rows) parts.push(row.text);
      seq = Number(rows.at(-1)!.seq);
    }
    const text = parts.join('');
    const bytes = Buffer.byteLength(text);
    if (whole && bytes === 0) {
      // No transcript yet (a new agent): no file, as on files (an empty one reads as a damaged session).
      await rm(target, { force: true });
    } else if (whole) {
      await writeFileAtomic(target, text, { mode: 0o600 });
    } else if (bytes > 0) {
      const file = await open(target, 'a', 0o600);
      try {
        await file.write(text);
      } finally {
        await file.close();
      }
    }
    mark.seq = seq;
    mark.bytes += bytes;
    return bytes;
  }

  private async remove(agentId: string): Promise<void> {
    const children = Object.keys(this.state.get(agentId)?.children ?? {}).filter(isSubagentId);
    this.state.delete(agentId);
    if (!isSafeAgentId(agentId)) return;
    const paths = agentPaths(this.options.root, agentId);
    await rm(paths.agentDir, { recursive: true, force: true });
    await rm(paths.transcriptDir, { recursive: true, force: true });
    for (const child of children)
      await rm(agentPaths(this.options.root, child).transcriptDir, { recursive: true, force: true });
    if (this.options.stateDir) await rm(this.stateFile(agentId), { force: true });
  }

  private stateFile(agentId: string): string {
    return path.join(this.options.stateDir!, `${agentId}.json`);
  }

  private async saveState(agentId: string, known: Mirrored): Promise<void> {
    if (!this.options.stateDir) return;
    await writeFileAtomic(this.stateFile(agentId), JSON.stringify(known), { mode: 0o600 });
  }

  /** What earlier runs recorded; a record that does not read is dropped (its agent is written whole). */
  private async loadState(dir: string): Promise<void> {
    await ensurePrivateDir(dir);
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.json')) continue;
      const agentId = name.slice(0, -'.json'.length);
      if (!isSafeAgentId(agentId) || this.state.has(agentId)) continue;
      try {
        const known = JSON.parse(await readFile(path.join(dir, name), 'utf8')) as Mirrored;
        if (
          [known.ledgerSeq, known.transcriptSeq, known.transcriptBytes].every(Number.isSafeInteger) &&
          (known.profileVersion === null || Number.isSafeInteger(known.profileVersion)) &&
          Object.entries(known.children ?? {}).every(
            ([child, mark]) =>
              isSubagentId(child) && Number.isSafeInteger(mark.seq) && Number.isSafeInteger(mark.bytes),
          )
        )
          this.state.set(agentId, known);
      } catch {
        // Written whole again.
      }
    }
  }
}

/** How many subagent rows an agent's files hold (each child's rows count from 1). */
function childRows(known: Mirrored): number {
  return Object.values(known.children ?? {}).reduce((sum, mark) => sum + mark.seq, 0);
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

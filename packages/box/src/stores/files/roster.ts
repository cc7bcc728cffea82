/**
 * The roster: one small SQLite file (`<dataDir>/roster.db`) holding every agent's list row as
 * it was last written, so `listAgents` after a restart reads one table and a few `stat`s
 * instead of opening every agent's store and JSONL (27 s for 1,000 agents).
 *
 * It is a cache, never a source: each row carries the stamp (modification time and size) of
 * the files it was read from (profile.json, store.db and its WAL), and a row whose stamp no
 * longer matches those files (another writer, a crash before the row was written) is not used.
 * A roster that cannot be opened or written is rebuilt or left behind, never an error.
 */
import { rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { AgentPaths } from './layout.ts';

const ROSTER_DDL = `
CREATE TABLE IF NOT EXISTS roster (
  id TEXT PRIMARY KEY,
  stamp TEXT NOT NULL,
  row TEXT NOT NULL
) STRICT;
`;

/** What the files of an agent looked like: a row read from them is good while this holds. */
export function agentStamp(paths: AgentPaths): string | null {
  const part = (file: string): string | null => {
    const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
    return stat ? `${stat.mtimeNs}:${stat.size}` : null;
  };
  const profile = part(paths.profile);
  // No profile: not an agent (yet, or any more).
  if (profile === null) return null;
  // An empty WAL holds nothing: the same as none (a reader may leave one behind).
  const wal = part(`${paths.storeDb}-wal`);
  return `${profile}|${part(paths.storeDb) ?? '-'}|${wal === null || wal.endsWith(':0') ? '-' : wal}`;
}

export class RosterIndex<Row> {
  private db: Database.Database | null = null;
  private putRow: Database.Statement | null = null;
  private readonly rows = new Map<string, { stamp: string; row: Row }>();

  /** `parse` checks a row read back from the file (undefined: not used). */
  constructor(
    private readonly file: string,
    private readonly parse: (value: unknown) => Row | undefined,
  ) {
    try {
      this.db = this.open();
    } catch {
      // Damaged: start it again (it is only a cache).
      rmSync(file, { force: true });
      try {
        this.db = this.open();
      } catch {
        this.db = null;
      }
    }
  }

  /** The row last written for this agent, if its files still have this stamp. */
  get(id: string, stamp: string): Row | undefined {
    const held = this.rows.get(id);
    return held && held.stamp === stamp ? held.row : undefined;
  }

  put(id: string, stamp: string, row: Row): void {
    const held = this.rows.get(id);
    if (held && held.stamp === stamp && JSON.stringify(held.row) === JSON.stringify(row)) return;
    this.rows.set(id, { stamp, row });
    this.write((db) => {
      this.putRow ??= db.prepare('INSERT OR REPLACE INTO roster (id, stamp, row) VALUES (?, ?, ?)');
      this.putRow.run(id, stamp, JSON.stringify(row));
    });
  }

  /** Runs `puts` as one transaction (one commit for many rows). */
  together(puts: () => void): void {
    if (!this.db) return puts();
    try {
      this.db.transaction(puts)();
    } catch {
      // As `write`: the rows in memory still serve.
    }
  }

  remove(id: string): void {
    this.rows.delete(id);
    this.write((db) => db.prepare('DELETE FROM roster WHERE id = ?').run(id));
  }

  close(): void {
    this.db?.close();
    this.db = null;
    this.putRow = null;
  }

  private open(): Database.Database {
    const db = new Database(this.file, { timeout: 1000 });
    try {
      db.pragma('journal_mode = WAL');
      // A lost row costs one agent a slow read at the next start, never a wrong answer.
      db.pragma('synchronous = OFF');
      db.exec(ROSTER_DDL);
      const stored = db.prepare('SELECT id, stamp, row FROM roster').all() as Array<{
        id: string;
        stamp: string;
        row: string;
      }>;
      for (const { id, stamp, row } of stored) {
        const parsed = this.parse(JSON.parse(row));
        if (parsed !== undefined) this.rows.set(id, { stamp, row: parsed });
      }
      return db;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private write(run: (db: Database.Database) => unknown): void {
    if (!this.db) return;
    try {
      run(this.db);
    } catch {
      // A full disk or a damaged file: the row in memory still serves; a restart reads the agent.
    }
  }
}

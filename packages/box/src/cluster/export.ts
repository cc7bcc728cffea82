/**
 * `sendbox export --database-url … --out DIR` (issue 25 §2): a cluster's agents written out in Grok
 * Bot's layout (stores/files/layout.ts: `agents/<id>/profile.json`, `agents/<id>/store.db`,
 * `agent-transcripts/<id>/<id>.jsonl`), the same records and entries a box on files would hold, so
 * txcript and every other reader of that layout read them.
 *
 * The ledger rows are appended through txcript's ledger writer, in seq order, and each must get the
 * seq it has in the database (both count from 1 per agent), or the export stops. The transcript rows
 * are the exact JSONL lines, joined. Each file is written under a temporary name and renamed into
 * place, so a reader never sees half of one.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { openLedgerForWrite, type JsonValue } from '@sendbox/txcript';
import type { LedgerEntry } from '@sendbox/protocol';
import { ensurePrivateDir, writeFileAtomic } from '../fs/atomic.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { Database } from '../stores/postgres/database.ts';

/** Rows appended per transaction of the exported store.db. */
const BATCH = 500;

export interface ExportSummary {
  agents: number;
  entries: number;
  transcriptBytes: number;
}

export async function exportCluster(db: Database, out: string): Promise<ExportSummary> {
  await ensurePrivateDir(out);
  const { rows } = await db.pool.query<{ agent_id: string }>(
    `SELECT agent_id FROM ${db.table('profiles')} UNION SELECT DISTINCT agent_id FROM ${db.table('ledger')}
     UNION SELECT DISTINCT agent_id FROM ${db.table('transcript')} ORDER BY 1`,
  );
  const summary: ExportSummary = { agents: 0, entries: 0, transcriptBytes: 0 };
  for (const { agent_id: agentId } of rows) {
    const paths = agentPaths(out, agentId);
    await ensurePrivateDir(paths.agentDir);
    await ensurePrivateDir(paths.transcriptDir);
    const profile = await db.pool.query<{ profile: string }>(
      `SELECT profile FROM ${db.table('profiles')} WHERE agent_id = $1`,
      [agentId],
    );
    if (profile.rows[0]) {
      const json = JSON.parse(profile.rows[0].profile) as unknown;
      await writeFileAtomic(paths.profile, `${JSON.stringify(json, null, 2)}\n`, { mode: 0o600 });
    }
    summary.entries += await exportLedger(db, agentId, paths.storeDb);
    const transcript = await db.pool.query<{ text: string }>(
      `SELECT text FROM ${db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
      [agentId],
    );
    const jsonl = transcript.rows.map((row) => row.text).join('');
    await writeFileAtomic(paths.jsonl, jsonl, { mode: 0o600 });
    summary.transcriptBytes += Buffer.byteLength(jsonl);
    summary.agents += 1;
  }
  return summary;
}

async function exportLedger(db: Database, agentId: string, target: string): Promise<number> {
  const temp = `${target}.export-${randomBytes(6).toString('hex')}`;
  const ledger = openLedgerForWrite(temp);
  let count = 0;
  try {
    let after = 0;
    for (;;) {
      const { rows } = await db.pool.query<{ seq: string; id: string; entry: string }>(
        `SELECT seq, id, entry FROM ${db.table('ledger')} WHERE agent_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [agentId, after, BATCH],
      );
      if (rows.length === 0) break;
      const seqs = ledger.appendEntries(rows.map((row) => JSON.parse(row.entry) as LedgerEntry));
      rows.forEach((row, i) => {
        if (seqs[i] !== Number(row.seq)) {
          throw new Error(
            `agent ${agentId}: ledger row ${row.id} has seq ${row.seq} in the database but got ${seqs[i]} in store.db (the database's seqs have a gap); nothing of this agent's store.db was written`,
          );
        }
      });
      count += rows.length;
      after = Number(rows.at(-1)!.seq);
    }
    const kv = await db.pool.query<{ key: string; value: string }>(
      `SELECT key, value FROM ${db.table('ledger_kv')} WHERE agent_id = $1 ORDER BY key`,
      [agentId],
    );
    for (const row of kv.rows) ledger.setKv(row.key, JSON.parse(row.value) as JsonValue);
    ledger.close();
    await rename(temp, target);
  } catch (error) {
    ledger.close();
    await rm(temp, { force: true });
    throw error;
  } finally {
    // WAL mode: closing folds the log into the file; what is left of it goes with the temp name.
    await rm(`${temp}-wal`, { force: true });
    await rm(`${temp}-shm`, { force: true });
  }
  return count;
}

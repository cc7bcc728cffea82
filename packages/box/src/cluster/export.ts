/**
 * `sendbox export --database-url … --out DIR` (issue 25 §2): a cluster's agents written out in Grok
 * Bot's layout (stores/files/layout.ts: `agents/<id>/profile.json`, `agents/<id>/store.db`,
 * `agent-transcripts/<id>/<id>.jsonl`), the same records and entries a box on files would hold, so
 * txcript and every other reader of that layout read them. The writing is layout-mirror.ts's (the
 * one writer of that layout from rows): each file is written whole under a temporary name and
 * renamed, so a reader never sees half of one, and each ledger row must get the seq it has in the
 * database, or the agent's export stops.
 */
import type { Database } from '../stores/postgres/database.ts';
import { LayoutMirror, type MirrorSummary } from './layout-mirror.ts';

export type ExportSummary = MirrorSummary;

export async function exportCluster(db: Database, out: string): Promise<ExportSummary> {
  const mirror = new LayoutMirror({ db, root: out });
  try {
    return await mirror.syncAll();
  } finally {
    await mirror.close();
  }
}

/**
 * A worker's copy of the rows in Grok Bot's layout (layout-mirror.ts) over a real PostgreSQL: later
 * rows are appended, a restart reads only what changed while it was down, a transcript appended
 * before a crash but not recorded is cut back, and an agent whose rows went is removed.
 */
import { appendFile, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { readLedgerFile } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { agentPaths } from '../stores/files/layout.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import type { HostEvent } from '../agent/events.ts';
import { CHILD_A, CHILD_B } from '../stores/transcript.contract.ts';
import { LayoutMirror } from './layout-mirror.ts';

const services = useServices();
const AGENT = '11111111-2222-4333-8444-555555555555';

describe('the layout mirror', () => {
  const kit = useClusterKit(services);

  async function rows(db: Database, from: number, to: number): Promise<void> {
    for (let seq = from; seq <= to; seq++) {
      const entry = { id: `n${seq}`, kind: 'notice', text: `note ${seq}`, level: 'info', timestampMs: seq };
      await db.pool.query(
        `INSERT INTO ${db.table('ledger')} (agent_id, seq, id, entry) VALUES ($1, $2, $3, $4)`,
        [AGENT, seq, entry.id, JSON.stringify(entry)],
      );
      const line = `${JSON.stringify({ role: 'user', message: { role: 'user', content: `line ${seq}` } })}\n`;
      await db.pool.query(`INSERT INTO ${db.table('transcript')} (agent_id, seq, text) VALUES ($1, $2, $3)`, [
        AGENT,
        seq,
        line,
      ]);
    }
  }

  async function joined(db: Database): Promise<string> {
    const { rows: lines } = await db.pool.query<{ text: string }>(
      `SELECT text FROM ${db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
      [AGENT],
    );
    return lines.map((row) => row.text).join('');
  }

  /** A fresh schema and the folders of a copy of its layout. */
  async function mirrorPlace() {
    const { db } = await kit.freshSchema();
    const dir = await kit.tempDir('mirror');
    const options = {
      db,
      root: path.join(dir, 'layout'),
      stateDir: path.join(dir, 'state'),
      log: () => undefined,
    };
    return { db, options };
  }

  it('appends later rows, reads only what changed after a restart, and cuts back an unrecorded append', async () => {
    const { db, options } = await mirrorPlace();
    const paths = agentPaths(options.root, AGENT);
    await db.pool.query(
      `INSERT INTO ${db.table('profiles')} (agent_id, profile, version) VALUES ($1, $2, 1)`,
      [AGENT, JSON.stringify({ name: 'Mirrored' })],
    );
    await rows(db, 1, 3);

    const mirror = new LayoutMirror(options);
    expect(await mirror.syncAll()).toEqual({
      agents: 1,
      entries: 3,
      transcriptBytes: Buffer.byteLength(await joined(db)),
    });
    expect(JSON.parse(await readFile(paths.profile, 'utf8'))).toEqual({ name: 'Mirrored' });
    const first = await stat(paths.jsonl);

    // Marked by an event, brought up to date: appended in place.
    await rows(db, 4, 5);
    mirror.observe({ type: 'state', agentId: AGENT, state: 'idle' });
    await mirror.settle();
    expect(await readFile(paths.jsonl, 'utf8')).toBe(await joined(db));
    expect((await stat(paths.jsonl)).ino).toBe(first.ino);
    expect(readLedgerFile(paths.storeDb).rows.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
    await mirror.close();

    // A restart with nothing new reads nothing.
    const again = new LayoutMirror(options);
    expect(await again.syncAll()).toEqual({ agents: 1, entries: 0, transcriptBytes: 0 });
    await again.close();

    // A crash after an append that was not recorded, then one more row: the file is the rows again.
    await appendFile(paths.jsonl, '{"role":"user","message":{"role":"user","content":"half');
    await rows(db, 6, 6);
    const restarted = new LayoutMirror(options);
    const line6 = (await joined(db)).split('\n').at(-2)!;
    expect(await restarted.syncAll()).toEqual({
      agents: 1,
      entries: 1,
      transcriptBytes: Buffer.byteLength(`${line6}\n`),
    });
    expect(await readFile(paths.jsonl, 'utf8')).toBe(await joined(db));
    expect((await stat(paths.jsonl)).ino).toBe(first.ino);
    await restarted.close();

    // The agent's rows gone while no worker ran: its copy goes at the next start.
    for (const table of ['ledger', 'transcript', 'profiles'])
      await db.pool.query(`DELETE FROM ${db.table(table)} WHERE agent_id = $1`, [AGENT]);
    const last = new LayoutMirror(options);
    expect(await last.syncAll()).toEqual({ agents: 0, entries: 0, transcriptBytes: 0 });
    await expect(stat(paths.agentDir)).rejects.toThrow();
    await expect(stat(paths.transcriptDir)).rejects.toThrow();
    await last.close();
  }, 60_000);

  it("copies each subagent's rows to its own JSONL, appends later ones, and removes them with the agent", async () => {
    const { db, options } = await mirrorPlace();
    await db.pool.query(
      `INSERT INTO ${db.table('profiles')} (agent_id, profile, version) VALUES ($1, $2, 1)`,
      [AGENT, JSON.stringify({ name: 'Parent' })],
    );
    const childLine = async (child: string, seq: number) => {
      const line = `${JSON.stringify({ role: 'user', message: { content: [{ type: 'text', text: `${child} ${seq}` }] } })}\n`;
      await db.pool.query(
        `INSERT INTO ${db.table('subagent_transcript')} (agent_id, child_id, seq, text) VALUES ($1, $2, $3, $4)`,
        [AGENT, child, seq, line],
      );
    };
    const childRows = async (child: string) => {
      const { rows: lines } = await db.pool.query<{ text: string }>(
        `SELECT text FROM ${db.table('subagent_transcript')} WHERE agent_id = $1 AND child_id = $2 ORDER BY seq`,
        [AGENT, child],
      );
      return lines.map((row) => row.text).join('');
    };
    await childLine(CHILD_A, 1);
    await childLine(CHILD_A, 2);
    await childLine(CHILD_B, 1);
    const mirror = new LayoutMirror(options);
    await mirror.syncAll();
    const fileA = agentPaths(options.root, CHILD_A).jsonl;
    const fileB = agentPaths(options.root, CHILD_B).jsonl;
    expect(await readFile(fileA, 'utf8')).toBe(await childRows(CHILD_A));
    expect(await readFile(fileB, 'utf8')).toBe(await childRows(CHILD_B));
    const first = await stat(fileA);

    // A step of a running child (its task's event) marks the parent: the child's file is appended to.
    await childLine(CHILD_A, 3);
    mirror.observe({
      type: 'task',
      agentId: AGENT,
      task: { id: CHILD_A } as Extract<HostEvent, { type: 'task' }>['task'],
    });
    await mirror.settle();
    expect(await readFile(fileA, 'utf8')).toBe(await childRows(CHILD_A));
    expect((await stat(fileA)).ino).toBe(first.ino);
    await mirror.close();

    // A restart finds the child's new rows by their count alone.
    await childLine(CHILD_B, 2);
    const again = new LayoutMirror(options);
    const summary = await again.syncAll();
    expect(summary.transcriptBytes).toBe(
      Buffer.byteLength((await childRows(CHILD_B)).split('\n')[1]! + '\n'),
    );
    expect(await readFile(fileB, 'utf8')).toBe(await childRows(CHILD_B));

    // The agent deleted: its children's files go with it.
    again.observe({ type: 'roster', agentId: AGENT, change: 'deleted' });
    await again.settle();
    await expect(stat(agentPaths(options.root, CHILD_A).transcriptDir)).rejects.toThrow();
    await expect(stat(agentPaths(options.root, CHILD_B).transcriptDir)).rejects.toThrow();
    await again.close();
  }, 60_000);
});

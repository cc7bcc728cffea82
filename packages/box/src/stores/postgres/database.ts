/**
 * The cluster's PostgreSQL: one pool per worker, every table in one schema (`sendbox` unless told),
 * created on first use. Migrations run under a transaction-scoped advisory lock, so workers that
 * start together do not race on `CREATE TABLE`, and only when the schema has not had these steps.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { SyncSql } from './sync-sql.ts';
import { FENCED_SQLSTATE } from './leases.ts';

export const DEFAULT_SCHEMA = 'sendbox';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface Database {
  readonly pool: pg.Pool;
  /** The schema, quoted for SQL. */
  readonly schema: string;
  /** `schema.name`, quoted for SQL. */
  table(name: string): string;
  /** This worker's synchronous connection (the ledger and the transcript write through it), opened on first use. */
  sync(): SyncSql;
  close(): Promise<void>;
}

/**
 * Each step is idempotent (IF NOT EXISTS, OR REPLACE): a new step is added at the end, and all of
 * them run again on a schema whose stored digest of them differs (migrate below).
 */
function migrations(s: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}.secrets (
       agent_id text NOT NULL,
       name text NOT NULL,
       iv bytea NOT NULL,
       tag bytea NOT NULL,
       data bytea NOT NULL,
       PRIMARY KEY (agent_id, name)
     )`,
    `CREATE TABLE IF NOT EXISTS ${s}.inbox (
       seq bigserial UNIQUE,
       agent_id text NOT NULL,
       nonce text NOT NULL,
       kind text NOT NULL,
       input jsonb NOT NULL,
       state text NOT NULL DEFAULT 'pending',
       turn integer,
       accepted_at bigint NOT NULL,
       detail text,
       PRIMARY KEY (agent_id, nonce)
     )`,
    `CREATE INDEX IF NOT EXISTS inbox_pending ON ${s}.inbox (agent_id, seq) WHERE state = 'pending'`,
    // One row per agent: who holds its turns (leases.ts). `epoch` only grows; every write of a turn checks it.
    `CREATE TABLE IF NOT EXISTS ${s}.leases (
       agent_id text PRIMARY KEY,
       owner text NOT NULL,
       epoch bigint NOT NULL,
       expires_at timestamptz NOT NULL
     )`,
    // The user's Stop, stored beside its NOTIFY (which a listener that is reconnecting misses): the
    // agent's last ledger seq when it was asked. The turn running then stops at its lease's next
    // renewal; a turn that starts later (its user entry after that seq) is not stopped (leases.ts).
    `ALTER TABLE ${s}.leases ADD COLUMN IF NOT EXISTS stop_seq bigint`,
    // The ledger rows exactly as store.db holds them (seq per agent, id, the entry's JSON text), and
    // the epoch of the lease they were written under (null: written by no turn).
    `CREATE TABLE IF NOT EXISTS ${s}.ledger (
       agent_id text NOT NULL,
       seq bigint NOT NULL,
       id text NOT NULL,
       entry text NOT NULL,
       epoch bigint,
       PRIMARY KEY (agent_id, seq),
       UNIQUE (agent_id, id)
     )`,
    `CREATE TABLE IF NOT EXISTS ${s}.ledger_kv (
       agent_id text NOT NULL,
       key text NOT NULL,
       value text NOT NULL,
       PRIMARY KEY (agent_id, key)
     )`,
    // The transcript: each row the exact JSONL lines of one append, as the grok_bot codec rendered them.
    `CREATE TABLE IF NOT EXISTS ${s}.transcript (
       agent_id text NOT NULL,
       seq bigint NOT NULL,
       text text NOT NULL,
       epoch bigint,
       PRIMARY KEY (agent_id, seq)
     )`,
    // An agent's profile.json, and a version raised by each write (a worker notices another's change).
    `CREATE TABLE IF NOT EXISTS ${s}.profiles (
       agent_id text PRIMARY KEY,
       profile text NOT NULL,
       version bigint NOT NULL
     )`,
    // What changes many times a second and is not kept (a send being written, a running tool's
    // output): the latest event per agent and key, for other workers' event streams
    // (cluster/events.ts). `version` orders the changes; rows older than a few minutes are pruned.
    `CREATE SEQUENCE IF NOT EXISTS ${s}.live_event_version`,
    `CREATE TABLE IF NOT EXISTS ${s}.live_events (
       agent_id text NOT NULL,
       key text NOT NULL,
       event text NOT NULL,
       version bigint NOT NULL,
       at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (agent_id, key)
     )`,
    // The cluster's own keys and token (cluster/cluster-keys.ts), each sealed with the master key.
    `CREATE TABLE IF NOT EXISTS ${s}.cluster_keys (
       name text PRIMARY KEY,
       iv bytea NOT NULL,
       tag bytea NOT NULL,
       data bytea NOT NULL
     )`,
    // The signed-in browsers of every gateway (cluster/session-book.ts), and the login codes redeemed.
    `CREATE TABLE IF NOT EXISTS ${s}.browser_sessions (
       id text PRIMARY KEY,
       created bigint NOT NULL,
       last_seen bigint NOT NULL,
       browser text NOT NULL
     )`,
    `CREATE TABLE IF NOT EXISTS ${s}.login_codes (
       nonce text PRIMARY KEY,
       expires bigint NOT NULL
     )`,
    // The fence of every write of an agent's ledger and transcript (leases.ts): the agent's writes are
    // serialized (a transaction-scoped advisory lock, so each computes the next seq from committed
    // rows; each statement of a volatile function takes a fresh snapshot), and a write under an
    // epoch holds the lease row shared until it commits, and only while the row still has that
    // epoch, else it raises FENCED_SQLSTATE and nothing of it stays. A claim waits for such a write
    // to commit, or the write sees the claim's new epoch: it lands before the takeover, or not at all.
    `CREATE OR REPLACE FUNCTION ${s}.fence_agent_write(p_lock text, p_agent text, p_epoch bigint)
     RETURNS void LANGUAGE plpgsql AS $fn$
     BEGIN
       PERFORM pg_advisory_xact_lock(hashtext(p_lock));
       IF p_epoch IS NOT NULL THEN
         PERFORM 1 FROM ${s}.leases WHERE agent_id = p_agent AND epoch = p_epoch FOR SHARE;
         IF NOT FOUND THEN
           RAISE EXCEPTION 'agent %: epoch % is no longer its lease''s', p_agent, p_epoch USING ERRCODE = '${FENCED_SQLSTATE}';
         END IF;
       END IF;
     END $fn$`,
    // One fenced ledger append, one statement (one round trip, committed on its own): the entries
    // with seq = the agent's last seq + their position.
    `CREATE OR REPLACE FUNCTION ${s}.append_ledger(p_lock text, p_agent text, p_epoch bigint, p_ids text[], p_entries text[])
     RETURNS SETOF bigint LANGUAGE plpgsql AS $fn$
     BEGIN
       PERFORM ${s}.fence_agent_write(p_lock, p_agent, p_epoch);
       RETURN QUERY
         INSERT INTO ${s}.ledger (agent_id, seq, id, entry, epoch)
         SELECT p_agent, last.seq + e.ord, e.id, e.entry, p_epoch
         FROM unnest(p_ids, p_entries) WITH ORDINALITY AS e(id, entry, ord),
              (SELECT COALESCE(max(l.seq), 0) AS seq FROM ${s}.ledger l WHERE l.agent_id = p_agent) AS last
         RETURNING seq;
     END $fn$`,
    // One fenced transcript append: a last row without its newline (a torn line written by hand) is
    // ended first, as in a file. Returns the new row's seq.
    `CREATE OR REPLACE FUNCTION ${s}.append_transcript(p_lock text, p_agent text, p_epoch bigint, p_text text)
     RETURNS bigint LANGUAGE plpgsql AS $fn$
     DECLARE
       last_seq bigint;
       last_tail text;
       new_seq bigint;
     BEGIN
       PERFORM ${s}.fence_agent_write(p_lock, p_agent, p_epoch);
       SELECT t.seq, right(t.text, 1) INTO last_seq, last_tail
         FROM ${s}.transcript t WHERE t.agent_id = p_agent ORDER BY t.seq DESC LIMIT 1;
       INSERT INTO ${s}.transcript (agent_id, seq, text, epoch)
         VALUES (p_agent, COALESCE(last_seq, 0) + 1,
                 CASE WHEN COALESCE(last_tail, E'\\n') = E'\\n' THEN '' ELSE E'\\n' END || p_text, p_epoch)
         RETURNING seq INTO new_seq;
       RETURN new_seq;
     END $fn$`,
    // The agent's latest sandbox snapshot (cluster/sandbox/): its manifest's SHA-256 in the bucket,
    // written under the lease epoch of the worker that took it.
    `CREATE TABLE IF NOT EXISTS ${s}.sandbox_snapshots (
       agent_id text PRIMARY KEY,
       manifest text NOT NULL,
       epoch bigint NOT NULL,
       taken_at bigint NOT NULL,
       files integer NOT NULL,
       bytes bigint NOT NULL
     )`,
    // The last ledger seq whose uploads the snapshot's sandbox took in (agent/upload-placement.ts).
    `ALTER TABLE ${s}.sandbox_snapshots ADD COLUMN IF NOT EXISTS uploads_seq bigint NOT NULL DEFAULT 0`,
    // Every snapshot published, newest last: the latest few are kept, older manifests and the blobs
    // only they use are deleted (cluster/sandbox/snapshot-store.ts, prune).
    `CREATE TABLE IF NOT EXISTS ${s}.sandbox_snapshot_history (
       seq bigserial PRIMARY KEY,
       agent_id text NOT NULL,
       manifest text NOT NULL
     )`,
    `CREATE INDEX IF NOT EXISTS sandbox_snapshot_history_agent ON ${s}.sandbox_snapshot_history (agent_id, seq)`,
    // The box's MCP servers (mcp.json's document, mcp/config.ts), one row for every worker, and a
    // version raised by each write.
    `CREATE TABLE IF NOT EXISTS ${s}.mcp_config (
       id boolean PRIMARY KEY DEFAULT true CHECK (id),
       doc text NOT NULL,
       version bigint NOT NULL
     )`,
    // Every agent's routines and their runs (routines/routine-book.ts's shape, an agent id beside),
    // which every worker arms (stores/postgres/routine-books.ts).
    `CREATE TABLE IF NOT EXISTS ${s}.routines (
       agent_id text NOT NULL,
       id text NOT NULL,
       name text NOT NULL,
       schedule text NOT NULL,
       timezone text NOT NULL,
       prompt text NOT NULL,
       silent boolean NOT NULL,
       paused boolean NOT NULL,
       anchor bigint NOT NULL,
       last_instant bigint,
       created_at bigint NOT NULL,
       updated_at bigint NOT NULL,
       PRIMARY KEY (agent_id, id)
     )`,
    `CREATE TABLE IF NOT EXISTS ${s}.routine_runs (
       agent_id text NOT NULL,
       routine_id text NOT NULL,
       instant bigint NOT NULL,
       fired_at bigint NOT NULL,
       missed integer NOT NULL DEFAULT 1,
       missed_since bigint,
       status text NOT NULL,
       turn integer,
       started_at bigint,
       ended_at bigint,
       PRIMARY KEY (agent_id, routine_id, instant)
     )`,
    `CREATE INDEX IF NOT EXISTS routine_runs_turn ON ${s}.routine_runs (agent_id, turn) WHERE turn IS NOT NULL`,
    // Box-wide documents sealed with the cluster's secrets key (AES-256-GCM, the name as associated
    // data): the MCP servers' OAuth clients and tokens (`mcp-oauth`), each agent's approval grants
    // (`approvals:<agent id>`). stores/postgres/sealed-documents.ts.
    `CREATE TABLE IF NOT EXISTS ${s}.sealed_documents (
       name text PRIMARY KEY,
       iv bytea NOT NULL,
       tag bytea NOT NULL,
       data bytea NOT NULL
     )`,
    // An agent's inbox rows after a seq (PgInbox.load when a turn worker catches up).
    `CREATE INDEX IF NOT EXISTS inbox_agent_seq ON ${s}.inbox (agent_id, seq)`,
    // Each agent's background tasks, and the worker whose process runs each (stores/postgres/task-book.ts).
    `CREATE TABLE IF NOT EXISTS ${s}.tasks (
       agent_id text NOT NULL,
       id text NOT NULL,
       kind text NOT NULL,
       turn integer NOT NULL,
       tool_call_id text NOT NULL,
       label text NOT NULL,
       output_path text,
       child_id text,
       state text NOT NULL,
       started_at bigint NOT NULL,
       ended_at bigint,
       outcome text,
       reported integer NOT NULL DEFAULT 0,
       notice text DEFAULT 'told',
       worker text NOT NULL,
       stop_requested boolean NOT NULL DEFAULT false,
       PRIMARY KEY (agent_id, id)
     )`,
    // Tables made before the stop flag (landed an hour apart on 2026-12-07) get it.
    `ALTER TABLE ${s}.tasks ADD COLUMN IF NOT EXISTS stop_requested boolean NOT NULL DEFAULT false`,
    `DROP INDEX IF EXISTS ${s}.tasks_running`,
    `CREATE INDEX IF NOT EXISTS tasks_running_by_worker ON ${s}.tasks (worker, agent_id) WHERE state = 'running'`,
    // A background command's output, raw as in its file, for the other workers' awaits (task-outputs.ts):
    // the pieces its worker shared, each starting at byte `start_offset` of the output; the newest kept.
    `CREATE TABLE IF NOT EXISTS ${s}.task_output (
       agent_id text NOT NULL,
       task_id text NOT NULL,
       start_offset bigint NOT NULL,
       bytes bytea NOT NULL,
       PRIMARY KEY (agent_id, task_id, start_offset)
     )`,
    // The worker whose reader marked a subagent's task lost (task-book.ts lapse): it, and only it,
    // closes the child's transcript (append_subagent_transcript below), whatever its own epoch.
    `ALTER TABLE ${s}.tasks ADD COLUMN IF NOT EXISTS lost_by text`,
    // A lost child whose transcript its reader has not closed yet: if that reader dies, the next takes it.
    `ALTER TABLE ${s}.tasks ADD COLUMN IF NOT EXISTS closing boolean NOT NULL DEFAULT false`,
    // How far the model has read a command's output, through an await on any worker (task-outputs.ts).
    `ALTER TABLE ${s}.tasks ADD COLUMN IF NOT EXISTS output_seen bigint NOT NULL DEFAULT 0`,
    // When each worker was last seen alive (stores/postgres/worker-heartbeats.ts).
    `CREATE TABLE IF NOT EXISTS ${s}.worker_heartbeats (
       worker text PRIMARY KEY,
       seen_at timestamptz NOT NULL
     )`,
    // The card a call of the agent waits on, and the worker running it (cluster/approval-waits.ts).
    `CREATE TABLE IF NOT EXISTS ${s}.approval_waits (
       agent_id text PRIMARY KEY,
       card_id text NOT NULL,
       worker text NOT NULL,
       taken boolean NOT NULL DEFAULT false
     )`,
    // A prompt accepted while the call waits: it is to yield (stored beside the NOTIFY, which can be missed).
    `ALTER TABLE ${s}.approval_waits ADD COLUMN IF NOT EXISTS yield_asked boolean NOT NULL DEFAULT false`,
    // A subagent's transcript (stores/postgres/transcript.ts), as the agent's own: each row the exact
    // JSONL lines of one append; `agent_id` is the parent's (deleting the agent deletes them).
    `CREATE TABLE IF NOT EXISTS ${s}.subagent_transcript (
       agent_id text NOT NULL,
       child_id text NOT NULL,
       seq bigint NOT NULL,
       text text NOT NULL,
       epoch bigint,
       PRIMARY KEY (agent_id, child_id, seq)
     )`,
    // The fence of a subagent's writes (its transcript's lines, the tasks its calls start), behind the
    // parent's lease as fence_agent_write is. A child that outlived the turn that started it (a
    // background one: the lease moved on to later turns, or a kept session is parked between jobs)
    // writes on while its task row says it runs on the writing worker, and not once that worker was
    // found dead (the row marked interrupted, its transcript closed by another), so a superseded
    // worker writes none of it; the worker that marked the row lost (`lost_by`) writes on to close
    // the child's open calls, whatever its epoch (a gateway's, a kept session's parked one).
    // Serialized per child (p_lock); the lease or task row is held shared until the commit, so
    // marking it lost waits for the write, or the write sees the mark.
    `CREATE OR REPLACE FUNCTION ${s}.fence_subagent_write(p_lock text, p_agent text, p_epoch bigint,
       p_worker text, p_child text)
     RETURNS void LANGUAGE plpgsql AS $fn$
     BEGIN
       PERFORM pg_advisory_xact_lock(hashtext(p_lock));
       IF p_epoch IS NOT NULL THEN
         PERFORM 1 FROM ${s}.leases WHERE agent_id = p_agent AND epoch = p_epoch FOR SHARE;
         IF NOT FOUND THEN
           PERFORM 1 FROM ${s}.tasks
             WHERE agent_id = p_agent AND id = p_child AND kind = 'subagent'
               AND ((state = 'running' AND worker = p_worker) OR (state = 'interrupted' AND lost_by = p_worker))
             FOR SHARE;
         END IF;
         IF NOT FOUND THEN
           RAISE EXCEPTION 'agent %: epoch % is no longer its lease''s, and its subagent % neither runs on the worker writing it nor was marked lost by it', p_agent, p_epoch, p_child USING ERRCODE = '${FENCED_SQLSTATE}';
         END IF;
       END IF;
     END $fn$`,
    // One fenced append to a child's transcript (fence_subagent_write), a torn last row ended first,
    // as append_transcript does.
    `CREATE OR REPLACE FUNCTION ${s}.append_subagent_transcript(p_lock text, p_agent text, p_epoch bigint,
       p_worker text, p_child text, p_text text)
     RETURNS bigint LANGUAGE plpgsql AS $fn$
     DECLARE
       last_seq bigint;
       last_tail text;
       new_seq bigint;
     BEGIN
       PERFORM ${s}.fence_subagent_write(p_lock, p_agent, p_epoch, p_worker, p_child);
       SELECT t.seq, right(t.text, 1) INTO last_seq, last_tail
         FROM ${s}.subagent_transcript t WHERE t.agent_id = p_agent AND t.child_id = p_child
         ORDER BY t.seq DESC LIMIT 1;
       INSERT INTO ${s}.subagent_transcript (agent_id, child_id, seq, text, epoch)
         VALUES (p_agent, p_child, COALESCE(last_seq, 0) + 1,
                 CASE WHEN COALESCE(last_tail, E'\\n') = E'\\n' THEN '' ELSE E'\\n' END || p_text, p_epoch)
         RETURNING seq INTO new_seq;
       RETURN new_seq;
     END $fn$`,
    // The digest of the steps above as they last ran (openDatabase's migrate): a worker whose steps
    // are the same runs none of them.
    `CREATE TABLE IF NOT EXISTS ${s}.schema_digest (
       name text PRIMARY KEY,
       digest text NOT NULL
     )`,
  ];
}

/** Tries a migration makes when PostgreSQL ends it to break a deadlock with live workers' queries. */
const MIGRATE_TRIES = 5;

/**
 * Brings the schema up to `migrations`, once: the steps' digest is stored when they ran, and a worker
 * that finds its own there runs none. A step's ALTER TABLE takes an exclusive lock even when it
 * changes nothing, so running them at every start stalled, or deadlocked, the queries of the workers
 * already serving (an approval-waits read joined to the leases was seen ended as a deadlock).
 */
async function migrate(client: pg.PoolClient, name: string, schema: string): Promise<void> {
  const steps = migrations(schema);
  const digest = createHash('sha256').update(steps.join('\0')).digest('hex');
  // Undefined where the schema or its digest table is not there yet.
  const stored = async (): Promise<string | undefined> => {
    const table = `${schema}.schema_digest`;
    const { rows: found } = await client.query<{ present: boolean }>(
      `SELECT to_regclass($1) IS NOT NULL AS present`,
      [table],
    );
    if (!found[0]?.present) return undefined;
    const { rows } = await client.query<{ digest: string }>(
      `SELECT digest FROM ${table} WHERE name = 'migrations'`,
    );
    return rows[0]?.digest;
  };
  if ((await stored()) === digest) return;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('sendbox-migrate:' || $1))`, [name]);
      // Workers of one new version starting together: the first runs the steps, the others find them run.
      if ((await stored()) === digest) {
        await client.query('COMMIT');
        return;
      }
      for (const step of steps) await client.query(step);
      await client.query(
        `INSERT INTO ${schema}.schema_digest (name, digest) VALUES ('migrations', $1)
         ON CONFLICT (name) DO UPDATE SET digest = EXCLUDED.digest`,
        [digest],
      );
      await client.query('COMMIT');
      return;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if ((error as { code?: string }).code !== DEADLOCK_DETECTED || attempt === MIGRATE_TRIES) throw error;
    }
  }
}

const DEADLOCK_DETECTED = '40P01';

export async function openDatabase(
  url: string,
  options: { schema?: string; max?: number } = {},
): Promise<Database> {
  const name = options.schema ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(name)) {
    throw new Error(`schema ${JSON.stringify(name)}: use lower-case letters, digits and _ (at most 63)`);
  }
  const schema = `"${name}"`;
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client's error (the server restarted) must not take the worker down: the pool drops it.
  pool.on('error', () => undefined);
  const client = await pool.connect().catch((error: unknown) => {
    void pool.end();
    throw new Error(`cannot reach PostgreSQL at ${redact(url)}: ${(error as Error).message}`, {
      cause: error,
    });
  });
  try {
    await migrate(client, name, schema);
  } catch (error) {
    client.release();
    await pool.end();
    throw error;
  }
  client.release();
  let sync: SyncSql | undefined;
  return {
    pool,
    schema,
    table: (table) => `${schema}.${table}`,
    sync: () => (sync ??= new SyncSql(url)),
    close: () => {
      sync?.close();
      return pool.end();
    },
  };
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

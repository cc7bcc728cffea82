/**
 * The cluster backend (issue 25): an agent's ledger, transcript, inbox and secrets in PostgreSQL, its
 * attachments in the bucket, its profile in `profiles`; on this worker's disk only its sandbox and
 * the local copies of its attachments (`--data-dir`). Stores opened `behind(fence)` write behind the
 * fence's lease epoch (leases.ts): the turn worker's, refused once another worker takes the agent over.
 */
import { mkdir } from 'node:fs/promises';
import type { PgBoss } from 'pg-boss';
import type { S3Client } from '@aws-sdk/client-s3';
import { AttachmentStore } from '../../attachments/store.ts';
import {
  childTranscripts,
  type AgentStores,
  type ProfileSource,
  type StoreBackend,
} from '../agent-stores.ts';
import { agentPaths, isSafeAgentId } from '../files/layout.ts';
import { profileSchema, readProfile, type Profile } from '../files/profile.ts';
import { isNotFound } from '../../sandbox/paths.ts';
import { S3AttachmentStore } from './attachments.ts';
import type { Database } from './database.ts';
import { PgInbox } from './inbox.ts';
import { removeClusterAgent } from './agent-removal.ts';
import type { AgentFence } from './leases.ts';
import { PgLedger } from './ledger.ts';
import { PgSecretStore } from './secrets.ts';
import { PgTranscript } from './transcript.ts';

export interface ClusterStoreOptions {
  db: Database;
  boss: PgBoss;
  s3: S3Client;
  bucket: string;
  /** The cluster's secrets key (32 bytes). */
  secretKey: Buffer;
  /** This worker's data dir: sandboxes and local copies. */
  dataDir: string;
  maxAttachmentBytes: number;
  /**
   * This worker's name (its heartbeat's and its task rows'): a subagent it runs writes its transcript
   * while its task row says it runs here, past the turn that started it. None: only behind the lease.
   */
  worker?: string;
}

export interface ClusterStoreBackend extends StoreBackend {
  /** True when the cluster knows the agent (its profile row). */
  exists(agentId: string): Promise<boolean>;
  /** The same stores, writing behind `fence` (its epoch read at each write: the turn worker moves it). */
  behind(fence: AgentFence): StoreBackend;
}

export function clusterStoreBackend(options: ClusterStoreOptions): ClusterStoreBackend {
  return {
    open: (agentId) => openClusterStores(options, { agentId, epoch: null }),
    exists: async (agentId) => {
      const { rowCount } = await options.db.pool.query(
        `SELECT 1 FROM ${options.db.table('profiles')} WHERE agent_id = $1`,
        [agentId],
      );
      return rowCount === 1;
    },
    agentIds: async () => {
      const { rows } = await options.db.pool.query<{ agent_id: string }>(
        `SELECT agent_id FROM ${options.db.table('profiles')}`,
      );
      return rows.map((row) => row.agent_id);
    },
    rosterMarks: async () => {
      const { db } = options;
      const { rows } = await db.pool.query<{ agent_id: string; mark: string }>(
        `SELECT p.agent_id,
                p.version || ':' || COALESCE((SELECT max(l.seq) FROM ${db.table('ledger')} l WHERE l.agent_id = p.agent_id), 0)
                  || ':' || COALESCE((SELECT max(t.seq) FROM ${db.table('transcript')} t WHERE t.agent_id = p.agent_id), 0)
                  || ':' || COALESCE((SELECT md5(k.value) FROM ${db.table('ledger_kv')} k
                                      WHERE k.agent_id = p.agent_id AND k.key = 'unreadState'), '') AS mark
         FROM ${db.table('profiles')} p`,
      );
      return new Map(rows.map((row) => [row.agent_id, row.mark]));
    },
    behind: (fence) => ({
      open: (agentId) => {
        if (agentId !== fence.agentId)
          throw new Error(`the fence of agent ${fence.agentId} opened for ${agentId}`);
        return openClusterStores(options, fence);
      },
    }),
    readProfile: (agentId) =>
      profileRow(options.db, agentId, agentPaths(options.dataDir, agentId).profile).read(),
    fetchAttachment: async (agentId, sha256) =>
      isSafeAgentId(agentId) && (await bucketAttachments(options, agentId).fetchBySha256(sha256)) !== null,
    copyAttachments: async (fromId, toId) => {
      if (isSafeAgentId(fromId) && isSafeAgentId(toId)) await bucketAttachments(options, fromId).copyTo(toId);
    },
    remove: async (agentId) => {
      if (isSafeAgentId(agentId)) await removeClusterAgent(options.db, options.s3, options.bucket, agentId);
    },
  };
}

/** The agent's attachments in the bucket, with this worker's local copies. */
export function bucketAttachments(options: ClusterStoreOptions, agentId: string): S3AttachmentStore {
  return new S3AttachmentStore(
    options.s3,
    options.bucket,
    agentId,
    new AttachmentStore(agentPaths(options.dataDir, agentId).attachments, options.maxAttachmentBytes),
  );
}

async function openClusterStores(options: ClusterStoreOptions, fence: AgentFence): Promise<AgentStores> {
  const { db } = options;
  const paths = agentPaths(options.dataDir, fence.agentId);
  await mkdir(paths.sandbox, { recursive: true, mode: 0o700 });
  const profile = profileRow(db, fence.agentId, paths.profile);
  await profile.read();
  return {
    ledger: new PgLedger(db, fence),
    transcript: new PgTranscript(db, fence),
    inbox: await PgInbox.open(db, options.boss, fence.agentId),
    attachments: bucketAttachments(options, fence.agentId),
    secrets: new PgSecretStore(db, options.secretKey, fence.agentId),
    profile,
    // One writer per agent is the lease's business here, not a file lock's.
    focus: { hold: () => undefined, release: () => undefined },
    local: paths,
    fence,
    childTranscript: childTranscripts(
      (childId) => new PgTranscript(db, fence, { childId, worker: options.worker ?? null }),
    ),
    replaced: () => false,
    close: () => undefined,
  };
}

/**
 * The profile row. An agent created on this worker has its profile.json written locally first (the
 * host's createAgent): the first open copies it into the row, which every worker reads from then on.
 */
function profileRow(db: Database, agentId: string, localFile: string): ProfileSource {
  const table = db.table('profiles');
  let version: number | null = null;
  const parse = (text: string): Profile => {
    const parsed = profileSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`${table} agent ${agentId}: invalid agent profile`);
    return parsed.data;
  };
  const source: ProfileSource = {
    async read() {
      const { rows } = await db.pool.query<{ profile: string; version: string }>(
        `SELECT profile, version FROM ${table} WHERE agent_id = $1`,
        [agentId],
      );
      const row = rows[0];
      if (row) {
        version = Number(row.version);
        return parse(row.profile);
      }
      let local: Profile;
      try {
        local = await readProfile(localFile);
      } catch (error) {
        if (isNotFound((error as Error).cause)) throw new Error(`no agent with id ${agentId} in the cluster`);
        throw error;
      }
      await db.pool.query(
        `INSERT INTO ${table} (agent_id, profile, version) VALUES ($1, $2, 1) ON CONFLICT (agent_id) DO NOTHING`,
        [agentId, JSON.stringify(local)],
      );
      return source.read();
    },
    changed() {
      const { rows } = db.sync().query(`SELECT version FROM ${table} WHERE agent_id = $1`, [agentId]);
      return rows[0] !== undefined && Number(rows[0].version) !== version;
    },
    async write(profile) {
      await db.pool.query(
        `INSERT INTO ${table} (agent_id, profile, version) VALUES ($1, $2, 1)
         ON CONFLICT (agent_id) DO UPDATE SET profile = EXCLUDED.profile, version = ${table}.version + 1`,
        [agentId, JSON.stringify(profile)],
      );
    },
  };
  return source;
}

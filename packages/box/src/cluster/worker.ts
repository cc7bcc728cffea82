/**
 * One worker of a cluster (issue 25): a host whose agents' stores are PostgreSQL and the bucket
 * (stores/postgres/agent-stores.ts), whose sessions accept inputs into the turn queue, and a turn
 * worker that runs the queue's jobs under leases. Every worker is both: any of them accepts an
 * input, and whichever is free runs its turn.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { MCP_CONFIG_FILE } from '../mcp/config.ts';
import { MCP_OAUTH_DOCUMENT } from '../mcp/oauth-store.ts';
import { DocumentSignInFlags } from '../mcp/sign-in-flags.ts';
import { PgMcpConfig } from '../stores/postgres/mcp-config.ts';
import { pgRoutineBooks } from '../stores/postgres/routine-books.ts';
import {
  agentDocumentNames,
  PgSealedDocument,
  USER_MEMORY_DOCUMENT,
} from '../stores/postgres/sealed-documents.ts';
import type { MemoryPlace } from '../memory/agent-memory.ts';
import { adoptMemory, DocumentMemory } from '../memory/memory-document.ts';
import { MemoryFile } from '../memory/memory-file.ts';
import { createAgentHost, type AgentHostOptions, type LocalAgentHost } from '../host/agent-host.ts';
import { AttachmentStore, DEFAULT_MAX_ATTACHMENT_BYTES } from '../attachments/store.ts';
import { s3ClientFor, type S3Credentials } from '../stores/postgres/attachments.ts';
import {
  bucketAttachments,
  clusterStoreBackend,
  type ClusterStoreBackend,
} from '../stores/postgres/agent-stores.ts';
import { agentPaths, isSafeAgentId, userMemoryFile } from '../stores/files/layout.ts';
import { SandboxSnapshots, snapshotIntervalMs } from './sandbox/sandbox-snapshots.ts';
import { SnapshotStore } from './sandbox/snapshot-store.ts';
import { runWithSandbox } from './sandbox/turn-sandbox.ts';
import { openDatabase, type Database } from '../stores/postgres/database.ts';
import { Leases, type AgentFence } from '../stores/postgres/leases.ts';
import { interruptOwnLeftovers, PgTaskBook } from '../stores/postgres/task-book.ts';
import { PgTaskOutputs } from '../stores/postgres/task-outputs.ts';
import { startHeartbeat, WORKER_TTL_MS, type Heartbeat } from '../stores/postgres/worker-heartbeats.ts';
import { agentHasWork } from '../stores/postgres/inbox.ts';
import { parseObjectStoreUrl } from '../stores/postgres/object-store-url.ts';
import { startTurnQueue } from '../stores/postgres/turn-queue.ts';
import { removeDeletedAgentsCopies, removeLocalCopies } from './local-copies.ts';
import { closeLeftoverChildren } from './leftover-children.ts';
import { WritePoints } from '../stores/write-points.ts';
import { startTurnWorker, turnConcurrency, type TurnWorker } from './turn-worker.ts';
import { ClusterApprovalWaits } from './approval-waits.ts';
import { ClusterEvents } from './events.ts';
import { LayoutMirror } from './layout-mirror.ts';
import { startTaskStops } from './task-stops.ts';
import { openClusterKeys, type ClusterKeys } from './cluster-keys.ts';
import { resealLegacySecrets } from './legacy-secrets.ts';
import { ClusterSessionBook } from './session-book.ts';
import { PgSecretStore } from '../stores/postgres/secrets.ts';
import type { SharedGatewayKeys } from '../gateway/server.ts';

/** The MCP servers that need a sign-in, shown by every gateway. */
const MCP_SIGN_IN_DOCUMENT = 'box:mcp-sign-in';

/**
 * The MCP servers, their OAuth state and sign-in flags, shared by every worker (a connector added through one
 * gateway is there for a turn on any worker). A data dir's own mcp.json seeds a cluster that has
 * none yet, and is otherwise not read, which the box log says.
 */
async function clusterMcp(
  db: Database,
  secretsKey: Buffer,
  options: ClusterWorkerOptions,
): Promise<NonNullable<ClusterWorkerOptions['mcp']>> {
  const log = options.mcp?.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const config = new PgMcpConfig(db, (problems) => {
    for (const problem of problems) log(`sendbox: MCP servers: ${problem}`);
  });
  const local = path.join(options.dataDir, MCP_CONFIG_FILE);
  const adopted = await config.adopt(local);
  if (adopted === 'adopted') log(`sendbox: ${local} is now this cluster's MCP servers (${config.file})`);
  if (adopted === 'ignored')
    log(
      `sendbox: ${local} is not read: this cluster's MCP servers are in ${config.file} ` +
        '(the settings panel edits them); remove the file to silence this line',
    );
  return {
    ...options.mcp,
    config,
    oauth: new PgSealedDocument(db, secretsKey, MCP_OAUTH_DOCUMENT),
    signInFlags: new DocumentSignInFlags(new PgSealedDocument(db, secretsKey, MCP_SIGN_IN_DOCUMENT)),
  };
}

/**
 * Agent and user memory in sealed rows every worker reads at each model call: what an agent saved
 * on one worker is in its next turn's system prompt on any other.
 */
function clusterMemory(db: Database, secretsKey: Buffer, fence?: AgentFence): MemoryPlace {
  const sealed = (name: string, scope: 'agent' | 'user') =>
    new DocumentMemory(
      new PgSealedDocument(db, secretsKey, name, fence),
      `${db.table('sealed_documents')} ${name}`,
      scope,
    );
  return {
    user: sealed(USER_MEMORY_DOCUMENT, 'user'),
    agent: (agentId) => sealed(agentDocumentNames(agentId).memory, 'agent'),
    behind: (turnFence) => clusterMemory(db, secretsKey, turnFence),
  };
}

/**
 * A data dir's user memory seeds a cluster that has none yet (a single box moved to a cluster keeps
 * it), and is otherwise not read, which the box log says. A file that cannot be read is logged, and
 * the worker starts.
 */
async function adoptUserMemory(
  db: Database,
  secretsKey: Buffer,
  options: ClusterWorkerOptions,
): Promise<void> {
  const log = options.mcp?.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const local = new MemoryFile(userMemoryFile(options.dataDir), 'user');
  const row = `${db.table('sealed_documents')} ${USER_MEMORY_DOCUMENT}`;
  try {
    const adopted = await adoptMemory(new PgSealedDocument(db, secretsKey, USER_MEMORY_DOCUMENT), local);
    if (adopted === 'adopted') log(`sendbox: ${local.file} is now this cluster's user memory (${row})`);
    if (adopted === 'ignored')
      log(
        `sendbox: ${local.file} is not read: this cluster's user memory is in ${row} ` +
          '(the memory view edits it); remove the file to silence this line',
      );
  } catch (error) {
    log(`sendbox: ${local.file} was not taken as this cluster's user memory: ${(error as Error).message}`);
  }
}

/** The `secrets` rows of the box secrets (not an agent id: those never hold a colon). */
const BOX_SECRETS_OWNER = 'box:secrets';

export interface ClusterWorkerOptions extends Omit<
  AgentHostOptions,
  | 'stores'
  | 'queuedTurns'
  | 'relay'
  | 'secretKey'
  | 'boxSecrets'
  | 'approvalGrants'
  | 'approvalWaits'
  | 'stopElsewhere'
  | 'routineBooks'
  | 'memory'
  | 'taskBooks'
  | 'taskOutputs'
> {
  databaseUrl: string;
  objectStoreUrl: string;
  /** The bucket's credentials (default: the AWS SDK's usual places). */
  credentials?: S3Credentials;
  /** The schema (default `sendbox`; pg-boss's is `<schema>_jobs`). */
  schema?: string;
  /** The master key (32 bytes, SENDBOX_MASTER_KEY_FILE): it opens the cluster's keys (cluster-keys.ts). */
  masterKey: Buffer;
  /** Where the master key came from, for the error a wrong one gets (default "the master key"). */
  masterKeySource?: string;
  /** This worker's name in the lease rows (default: host name and a random suffix). */
  workerName?: string;
  /** Lease TTL (default LEASE_TTL_MS). */
  leaseTtlMs?: number;
  /**
   * Told when a turn job ends in an error (the queue tries it again), and when a sandbox snapshot
   * during a turn fails. Default: a line on stderr.
   */
  onTurnError?(agentId: string, error: unknown): void;
  /** False: accept and serve only, leave every turn to other workers (default true). */
  takeTurns?: boolean;
}

export interface ClusterWorker {
  host: LocalAgentHost;
  db: Database;
  leases: Leases;
  /** The agents' stores in PostgreSQL and the bucket (a turn's behind its lease's fence). */
  stores: ClusterStoreBackend;
  /** What this worker's gateway shares with the others': the cluster's token, session key and sessions. */
  shared: SharedGatewayKeys;
  /**
   * Every agent's sessions in Grok Bot's layout on this worker's disk, kept from the rows (the
   * message search and the `sessions` connector read them).
   */
  sessionFiles: LayoutMirror;
  /** Closes the host; with it the turn worker stops taking jobs, and the queue and the database close. */
  close(): Promise<void>;
}

export async function startClusterWorker(options: ClusterWorkerOptions): Promise<ClusterWorker> {
  const schema = options.schema ?? 'sendbox';
  const intervalMs = snapshotIntervalMs(options.env ?? process.env);
  const turnError = (agentId: string, error: unknown): void => {
    if (options.onTurnError) options.onTurnError(agentId, error);
    else
      process.stderr.write(`sendbox: a turn job of agent ${agentId} failed: ${(error as Error).message}\n`);
  };
  const location = parseObjectStoreUrl(options.objectStoreUrl);
  const db = await openDatabase(options.databaseUrl, { schema });
  // The ledger and transcript connection, open before the first turn needs it.
  db.sync().connect();
  let keys: ClusterKeys;
  try {
    keys = await openClusterKeys(db, options.masterKey, options.masterKeySource);
    const resealed = await resealLegacySecrets(db, options.masterKey, keys.secretsKey);
    if (resealed > 0)
      process.stderr.write(
        `sendbox: sealed ${resealed} agent secret(s) saved before the cluster's secrets key again under that key\n`,
      );
  } catch (error) {
    await db.close();
    throw error;
  }
  // Agents deleted while this worker was down: their local copies go before it serves.
  await removeDeletedAgentsCopies(db, options.dataDir).catch((error: unknown) =>
    process.stderr.write(`sendbox: local copies of deleted agents were not all removed: ${String(error)}\n`),
  );
  const s3 = s3ClientFor(location, options.credentials);
  const boss = await startTurnQueue(options.databaseUrl, schema);
  const workerName = options.workerName ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const storeOptions = {
    db,
    worker: workerName,
    boss,
    s3,
    bucket: location.bucket,
    secretKey: keys.secretsKey,
    dataDir: options.dataDir,
    maxAttachmentBytes: options.maxAttachmentBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES,
  };
  const stores = clusterStoreBackend(storeOptions);
  const snapshots = new SandboxSnapshots(
    new SnapshotStore(s3, location.bucket, db),
    (agentId) => agentPaths(options.dataDir, agentId).sandbox,
    intervalMs,
  );
  const leases = new Leases(db, workerName, options.leaseTtlMs);
  const workerTtlMs = options.leaseTtlMs ?? WORKER_TTL_MS;
  let host: LocalAgentHost | undefined;
  let events: ClusterEvents | undefined;
  let turns: TurnWorker = { wake: () => undefined, stop: () => Promise.resolve() };
  const sessionFiles = new LayoutMirror({
    db,
    root: path.join(options.dataDir, 'cache', 'cluster-sessions'),
    stateDir: path.join(options.dataDir, 'cache', 'cluster-sessions-state'),
  });
  let heartbeat: Heartbeat | undefined;
  let taskStops: { stop(): void } | undefined;
  try {
    const leftovers = await interruptOwnLeftovers(db, workerName);
    // A child left open is reported, not a reason not to start: its steps read as they were written.
    await closeLeftoverChildren(
      db,
      workerName,
      leftovers,
      WritePoints.fromEnv(options.env ?? process.env),
    ).catch((error: unknown) => process.stderr.write(`sendbox: ${(error as Error).message}\n`));
    heartbeat = await startHeartbeat(db, workerName, workerTtlMs);
    events = await ClusterEvents.start({ db, databaseUrl: options.databaseUrl, worker: workerName });
    const relayed = events;
    const mcp = {
      ...(await clusterMcp(db, keys.secretsKey, options)),
      boxTranscripts: sessionFiles.transcripts,
    };
    await adoptUserMemory(db, keys.secretsKey, options);
    host = await createAgentHost({
      ...options,
      mcp,
      approvalGrants: (agentId) =>
        new PgSealedDocument(db, keys.secretsKey, agentDocumentNames(agentId).approvals),
      approvalWaits: new ClusterApprovalWaits(db, workerName, (agentId) => relayed.askTurn(agentId, 'yield')),
      memory: clusterMemory(db, keys.secretsKey),
      taskBooks: (agentId, fence, lost) => new PgTaskBook(db, agentId, workerName, workerTtlMs, fence, lost),
      taskOutputs: (agentId) => new PgTaskOutputs(db, agentId),
      routineBooks: pgRoutineBooks(db),
      stores: () => stores,
      queuedTurns: true,
      relay: events.relay,
      stopElsewhere: (agentId) => {
        // Stored as well: a worker whose listener is reconnecting misses the NOTIFY.
        leases
          .askStop(agentId)
          .catch((error: unknown) =>
            process.stderr.write(
              `sendbox: a Stop of agent ${agentId} was not stored: ${(error as Error).message}\n`,
            ),
          );
        return relayed.askTurn(agentId, 'stop');
      },
      secretKey: keys.secretsKey,
      boxSecrets: new PgSecretStore(db, keys.secretsKey, BOX_SECRETS_OWNER),
    });
    const running = host;
    // The user's Stop, or a prompt ending a card's wait, through another gateway: acted on if the
    // turn runs here.
    relayed.onTurnAsk((agentId, ask) => {
      if (ask === 'yield') running.yieldHere(agentId);
      else void running.stopHere(agentId).catch(() => undefined);
    });
    // Each agent's sessions copied as any worker writes them; all of them read once at start, behind it.
    host.subscribe((event) => sessionFiles.observe(event));
    void sessionFiles
      .syncAll()
      .catch((error: unknown) =>
        process.stderr.write(`sendbox: sessions copy: ${(error as Error).message}\n`),
      );
    taskStops = startTaskStops(
      db,
      workerName,
      (agentId, taskId) => running.stopTaskHere(agentId, taskId),
      (error) =>
        process.stderr.write(
          `sendbox: could not act on a task stop asked through another gateway: ${(error as Error).message}\n`,
        ),
    );
    // An agent deleted through any gateway: this worker's local copies of it go too.
    host.subscribe((event) => {
      if (event.type !== 'roster' || event.change !== 'deleted' || !isSafeAgentId(event.agentId)) return;
      void removeLocalCopies(options.dataDir, event.agentId).catch(() => undefined);
    });
    if (options.takeTurns !== false) {
      const worker = await startTurnWorker({
        boss,
        leases,
        concurrency: turnConcurrency(options.env ?? process.env),
        hasWork: (agentId) => agentHasWork(db, agentId),
        run: (agentId, signal, { epoch, lastTry }) =>
          runWithSandbox(
            {
              snapshots,
              fetchAttachments: (id) => bucketAttachments(storeOptions, id).fetchMissing(),
              attachmentCopy: async (id, sha256) =>
                (await new AttachmentStore(agentPaths(options.dataDir, id).attachments).find(sha256)) ??
                (await bucketAttachments(storeOptions, id).fetchBySha256(sha256)),
              subscribe: (listener) => running.subscribe(listener),
              runQueuedTurns: (id, stop, beforeTurn) =>
                running.runQueuedTurns(id, {
                  epoch,
                  behind: (fence) => stores.behind(fence),
                  signal: stop,
                  closeCutTurns: lastTry,
                  beforeTurn,
                }),
              report: turnError,
            },
            agentId,
            signal,
            epoch,
          ),
        onError: turnError,
        stopAsked: (agentId, seq) => void running.stopTurnStartedBy(agentId, seq).catch(() => undefined),
        yieldAsked: (agentId) => running.yieldHere(agentId),
      });
      turns = worker;
      // An input accepted through any gateway wakes the turn workers at once, not at their next poll.
      events.onInput(() => worker.wake());
    }
  } catch (error) {
    taskStops?.stop();
    await host?.close().catch(() => undefined);
    await heartbeat?.stop();
    await events?.close().catch(() => undefined);
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    s3.destroy();
    await db.close();
    throw error;
  }
  const started = { host, turns, events, heartbeat, taskStops };
  // Closing the host (the CLI's stop) ends the worker: no more jobs, then the queue and the database.
  host.lifecycle.add({
    async hostClosed() {
      started.taskStops.stop();
      await started.turns.stop().catch(() => undefined);
      // The host's sessions are closed, their tasks ended: nothing of this worker lapses later.
      await started.heartbeat.stop();
      await started.events.close().catch(() => undefined);
      await sessionFiles.close();
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      // A prune queued behind the last snapshot ends before its connections do.
      await snapshots.settled();
      s3.destroy();
      await db.close();
    },
  });
  const shared = { token: keys.token, sessionKey: keys.sessionKey, sessions: new ClusterSessionBook(db) };
  return { host: started.host, db, leases, stores, shared, sessionFiles, close: () => started.host.close() };
}

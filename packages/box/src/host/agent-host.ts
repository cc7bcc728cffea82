/**
 * `LocalAgentHost`: the `AgentHost` over a data dir (layout in `layout.ts`).
 * It keeps one live `AgentSession` per agent it has touched, the focus (whose
 * store.db holds the store lock), and the event subscribers.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { LedgerEntry } from '@sendbox/protocol';
import { titleFromUserText } from '@sendbox/txcript';
import { AttachmentStore, DEFAULT_MAX_ATTACHMENT_BYTES } from '../attachments/store.ts';
import { ensurePrivateDir, removeAtomicTemps } from '../fs/atomic.ts';
import { searchCacheDir } from '../search/message-search.ts';
import { providerFromEnv, statusOf, type ProviderFromEnv } from '../providers/index.ts';
import { ModelSettings, type ModelSettingsInput } from './model-settings.ts';
import { checkConnection, type ConnectionCheck } from '../providers/connection-check.ts';
import type { ModelProvider } from '../providers/types.ts';
import { detectConfinement, type Confinement, type ConfinementOptions } from '../sandbox/confinement.ts';
import type { SandboxStatus } from '../sandbox/confinement.ts';
import { SandboxDisks } from '../sandbox/disk-quota.ts';
import { EgressProxies, type EgressProxyOptions } from '../sandbox/egress-proxy.ts';
import { removeSandboxTemps } from '../sandbox/paths.ts';
import { loadOrCreateSecretKey, SECRET_NAME_PATTERN } from '../secrets/store.ts';
import { toolCatalog, type ToolCatalogOptions } from '../tools/catalog.ts';
import { webSetupFromEnv, type WebSearchChoice, type XaiModel } from '../tools/web-setup.ts';
import { imageLayer } from '../context/images.ts';
import { AgentCompactions } from '../context/agent-compaction.ts';
import { CalibrationBook } from '../context/calibration-book.ts';
import { AgentLifecycle } from '../agent/lifecycle.ts';
import { AgentBackgrounds } from '../subagents/agent-background.ts';
import { ChildCopies } from '../subagents/child-copies.ts';
import type { TaskView } from '../tasks/agent-tasks.ts';
import { AgentSession, type SessionConfig } from '../agent/agent-session.ts';
import type { PromptRevision } from '../agent/revisions.ts';
import { McpHub, type BoxSecretsView, type McpHubOptions } from '../mcp/hub.ts';
import type { ConnectStart } from '../mcp/oauth.ts';
import { McpSettings } from '../mcp/settings.ts';
import {
  approvalsFile,
  ToolApprovals,
  type ApprovalDecision,
  type ApprovalLedger,
  type ApprovalStores,
} from '../approvals/gate.ts';
import { filesStoreBackend } from '../stores/files/agent-stores.ts';
import type { StoreBackend } from '../stores/agent-stores.ts';
import { needsRecovery } from '../stores/files/inbox.ts';
import { UPLOADS_FOLDER } from '../agent/upload-staging.ts';
import { WritePoints } from '../stores/write-points.ts';
import { AgentRoster } from './agent-roster.ts';
import {
  Routines,
  systemClock,
  type RoutineClock,
  type RoutineUpdate,
  type RoutineView,
} from '../routines/routines.ts';
import { boxTimeZone, minIntervalFromEnv } from '../routines/schedule.ts';
import type { RoutineBooks } from '../routines/routine-book.ts';
import { StateError } from '../tools/update-state/schema.ts';
import { MemoryBook, memoryFiles, type MemoryPlace } from '../memory/agent-memory.ts';
import type { SharedTaskOutput } from '../tasks/shared-output.ts';
import type { TaskBookOpener } from '../tasks/task-book.ts';
import { forgetEntry, memoryView, type MemoryView } from '../memory/memory-view.ts';
import type { MemoryScope } from '../memory/memory-store.ts';
import { AgentProfiles } from '../profile/profile-editor.ts';
import { profileHandler } from '../profile/profile-handler.ts';
import { agentSettingsOf, type AgentSettings } from '../profile/agent-settings.ts';
import { checkedUpdate, MAX_NAME_CHARS, type AgentUpdate } from '../profile/agent-update.ts';
import { filesystemIsFull, isDiskFullError, StoreWriteError } from '../stores/errors.ts';
import { agentPaths, agentsRoot, isSafeAgentId, isSubagentId } from '../stores/files/layout.ts';
import { DEFAULT_SEND_REMINDER_EVERY } from '../context/send-reminder.ts';
import { readProfile, writeProfile, type Profile } from '../stores/files/profile.ts';
import {
  type AgentHost,
  type CreateAgentInput,
  type RosterRow,
  type SandboxDiskStatus,
  type SettingsView,
  type UploadInput,
} from './types.ts';
import type { TodoItem } from '../tools/types.ts';
import { HostError } from '../agent/errors.ts';
import { answeredSecretRequestsNotHeld } from '../agent/secrets-held.ts';
import { type EventRelay, type EventRelayFactory, type HostEvent } from '../agent/events.ts';
import { type ModelStatus } from '../providers/types.ts';
import { AcceptsFirst } from '../agent/accepts-first.ts';
import { TurnSessions, type QueuedTurnsJob } from './turn-sessions.ts';
import { type PendingInput } from '../stores/inbox.ts';
import { type SequencedEntry } from '../stores/ledger.ts';

export const DEFAULT_MAX_STEPS_PER_TURN = 50;

export interface AgentHostOptions {
  dataDir: string;
  /** The model. `undefined`: chosen from the environment (`providerFromEnv`); `null`: no model. */
  provider?: ModelProvider | null;
  /** Environment for provider selection and defaults (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Consecutive non-send tool calls before a reminder (default 6, or `SENDBOX_SEND_REMINDER_EVERY`). */
  sendReminderEvery?: number;
  maxStepsPerTurn?: number;
  maxAttachmentBytes?: number;
  shell?: ToolCatalogOptions['shell'];
  /**
   * How tool processes are confined: detected (bubblewrap) unless given. Without bubblewrap the
   * shell tool is refused, unless `sandbox.unsafeHostTools` is set.
   */
  sandbox?: ConfinementOptions & {
    confinement?: Confinement;
    egress?: EgressProxyOptions;
    /** Disk per sandbox folder (default 10 GiB, at most a quarter of the filesystem). */
    diskQuotaBytes?: number;
  };
  /** Clock (epoch ms), for tests. */
  now?: () => number;
  /** Every durable write passes one (default: from `SENDBOX_TEST_CRASH_AT_WRITE`, else counting only). */
  writePoints?: WritePoints;
  /** How long a full disk holds an agent's pending inputs back before the next try (default 2 s). */
  inboxRetryMs?: number;
  /** Where the box's own error lines go (default: stderr). */
  log?: (line: string) => void;
  /** Accepts before turn starts (agent/accepts-first.ts); tests pass one to hold turns with it. */
  acceptsFirst?: AcceptsFirst;
  /** The routines' clock (default: the system's); tests step a fake one. */
  routineClock?: RoutineClock;
  /** Where the routines are kept (default: `agents/<id>/routines.db`; a cluster's: its rows). */
  routineBooks?: RoutineBooks;
  /** What capabilities add to each model call's view of an agent (context/model-call.ts); default none. */
  contextLayers?: SessionConfig['contextLayers'];
  /** What runs before every checked tool call (agent/tool-dispatch.ts); default none. */
  toolGates?: SessionConfig['toolGates'];
  /** What capabilities add at a session's own points (agent/extension.ts), after background work's; default none. */
  extensions?: SessionConfig['extensions'];
  /** MCP servers: how long an unused one stays up, and where their log lines go (mcp/hub.ts). */
  mcp?: Pick<
    McpHubOptions,
    'idleMs' | 'log' | 'hostHome' | 'boxTranscripts' | 'config' | 'oauth' | 'signInFlags'
  >;
  /** An agent's approval grants (default: `agents/<id>/approvals.json`, approvals/gate.ts). */
  approvalGrants?: ApprovalStores['grants'];
  /** The cards calls wait on, known to every worker of a cluster (cluster/approval-waits.ts); default none. */
  approvalWaits?: ApprovalStores['waits'];
  /** Where an agent's background-task records are kept (default: `agents/<id>/tasks.db`; a cluster's: its rows). */
  taskBooks?: TaskBookOpener;
  /** Where background commands' output is shared with other workers (a cluster's rows); default none. */
  taskOutputs?: (agentId: string) => SharedTaskOutput;
  /** Where agent and user memory is kept (default: the data dir's `memory.json` files; a cluster's: its rows). */
  memory?: MemoryPlace;
  /** The agents' stores: given the files backend of the data dir, the backend to use (default: that one). */
  stores?: (files: StoreBackend) => StoreBackend;
  /**
   * Accepted inputs wait for a turn worker (cluster/turn-worker.ts) instead of running in the
   * agent's session: `runQueuedTurns` runs them. Default false: the session runs them.
   */
  queuedTurns?: boolean;
  /** The box-wide secrets key (default: `keys/secrets.key` in the data dir, made on first use). */
  secretKey?: Buffer;
  /** The box secrets (default: `box-secrets.enc` in the data dir, mcp/hub.ts). */
  boxSecrets?: McpHubOptions['boxSecrets'];
  /** Between this host's events and its subscribers (default: none; a cluster worker's: cluster/events.ts). */
  relay?: EventRelayFactory;
  /**
   * Asks the worker running an agent's turn elsewhere to stop it (a cluster's: cluster/events.ts);
   * true when a turn of the agent runs somewhere. Default none: every turn runs here.
   */
  stopElsewhere?: (agentId: string) => boolean;
}

export async function createAgentHost(options: AgentHostOptions): Promise<LocalAgentHost> {
  const dataDir = path.resolve(options.dataDir);
  await ensurePrivateDir(agentsRoot(dataDir));
  await ensurePrivateDir(path.join(dataDir, 'agent-transcripts'));
  await ensurePrivateDir(path.join(dataDir, 'sandboxes'));
  const key = options.secretKey ?? (await loadOrCreateSecretKey(dataDir));
  const confinement = options.sandbox?.confinement ?? (await detectConfinement(options.sandbox));
  // What an earlier box left running in the sandboxes goes before any file work there.
  await confinement.sweep(path.join(dataDir, 'sandboxes'));
  const disks = new SandboxDisks(
    options.sandbox?.diskQuotaBytes === undefined ? {} : { quotaBytes: options.sandbox.diskQuotaBytes },
  );
  await disks.fitTo(path.join(dataDir, 'sandboxes'));
  const host = new LocalAgentHost(dataDir, key, confinement, disks, options);
  // Hook (web settings panel): a model saved in the panel applies when the environment sets none;
  // loaded before recovery, so pending inputs resume on it.
  if (options.provider === undefined) await host.loadModelSettings();
  await host.recover();
  // A cluster gateway: the cards other workers' calls wait on already (the roster shows them).
  await host.approvals.heardOpenWaits();
  // A bad mcp.json is told on the terminal at start (and again whenever it changes), never fatal.
  await host.mcp.config.current();
  // After recovery: inputs of fires the inbox took before a crash are pending already.
  await host.routines.start(await agentIds(dataDir));
  return host;
}

export class LocalAgentHost implements AgentHost {
  private readonly sessions = new Map<string, Promise<AgentSession>>();
  /** The sessions turn jobs ran in, kept for the agents' next jobs (queuedTurns). */
  private readonly turnSessions = new TurnSessions(() => this.config);
  private readonly listeners = new Set<(event: HostEvent) => void>();
  private readonly relay: EventRelay;
  private provider: ModelProvider | null;
  private status: ModelStatus;
  private readonly settings: ModelSettings;
  private readonly config: SessionConfig;
  /** The tools for the model in use (web_search may use xAI's own search). */
  private readonly catalogFor: (xai: XaiModel | undefined) => SessionConfig['tools'];
  private searchStatus: WebSearchChoice['status'] = { backend: null, howToEnable: '' };
  /** Capabilities that hold something per agent let it go here (agent/lifecycle.ts). */
  readonly lifecycle = new AgentLifecycle();
  private readonly backgrounds: AgentBackgrounds;
  /** mcp.json, the box secrets and each agent's MCP servers. */
  readonly mcp: McpHub;
  /** The settings panel's MCP servers: their status and tools, edits, tests, the sessions switch. */
  readonly mcpSettings: McpSettings;
  /** Approval cards before tools run (approvals/gate.ts). */
  readonly approvals: ToolApprovals;
  /** Every agent's routines: the scheduler, its fires and run history (routines/). */
  readonly routines: Routines;
  private focused: string | null = null;
  /** Each agent's roster mark (StoreBackend.rosterMarks) when listAgents last refreshed its session. */
  private readonly listedMarks = new Map<string, string>();
  private closed = false;
  /** Every agent's list row, kept as agents change, so a restart lists them without opening them. */
  private readonly roster: AgentRoster;
  /** Agent and user memory (memory/), added to every model call. */
  private readonly memories: MemoryBook;
  /** Profile changes, the user's (`updateAgent`) and the agents' own (`update_state profile`). */
  private readonly profiles: AgentProfiles;
  private readonly stopElsewhere: AgentHostOptions['stopElsewhere'];

  constructor(
    readonly dataDir: string,
    secretKey: Buffer,
    private readonly confinement: Confinement,
    private readonly disks: SandboxDisks,
    options: AgentHostOptions,
  ) {
    const env = options.env ?? process.env;
    this.stopElsewhere = options.stopElsewhere;
    const deliver = (event: HostEvent): void => this.deliver(event);
    this.relay = options.relay?.(deliver) ?? { local: deliver };
    this.settings = new ModelSettings(dataDir, env);
    this.roster = new AgentRoster(dataDir, async (id) => {
      const session = this.sessions.get(id);
      return session ? this.storedRow(await session) : undefined;
    });
    if (options.provider === undefined) {
      const chosen = providerFromEnv(env);
      this.provider = chosen.provider;
      this.status = chosen.status;
    } else {
      this.provider = options.provider;
      this.status = statusOf(options.provider);
    }
    const everyFromEnv = Number(env.SENDBOX_SEND_REMINDER_EVERY);
    const egress = new EgressProxies(path.join(dataDir, 'run'), options.sandbox?.egress);
    this.lifecycle.add({
      agentDeleted: (_id, paths) => egress.release(paths.sandbox),
      hostClosed: () => egress.close(),
    });
    this.lifecycle.add({
      // The agent's processes are killed and its uid freed only once its folder is gone.
      agentDeleted: async (_id, paths) => {
        await confinement.release(paths.sandbox);
        disks.forget(paths.sandbox);
      },
      // A confinement given in the options is its giver's to close.
      hostClosed: () => (options.sandbox?.confinement ? undefined : confinement.close()),
    });
    // The web tools (tools/web-setup.ts); the catalog is made again when the model changes, since
    // xAI's own search comes with an xAI model.
    const web = webSetupFromEnv(env);
    this.lifecycle.add({ hostClosed: () => web.pages.close() });
    this.catalogFor = (xai) => {
      const search = web.search(xai);
      this.searchStatus = search.status;
      return toolCatalog({
        confinement,
        egress,
        disk: disks,
        shell: options.shell,
        search: search.backend,
        pageFetch: web.pages.fetch,
      });
    };
    const tools = this.catalogFor(options.provider === undefined ? this.settings.xaiModel() : undefined);
    const writePoints = options.writePoints ?? WritePoints.fromEnv(env);
    const stores = (options.stores ?? ((files) => files))(
      filesStoreBackend({
        dataDir,
        secretKey,
        maxAttachmentBytes: options.maxAttachmentBytes ?? DEFAULT_MAX_ATTACHMENT_BYTES,
        writePoints,
      }),
    );
    // The profile capabilities read between a session's turns (its approval rules, its MCP servers).
    const profileOf = (agentId: string) =>
      stores.readProfile?.(agentId) ?? readProfile(agentPaths(dataDir, agentId).profile);
    const mcp = new McpHub({
      dataDir,
      secretKey,
      confinement,
      egress,
      baseEnv: toolEnvironment(env),
      ...(env.HOME ? { hostHome: env.HOME } : {}),
      ...(options.boxSecrets ? { boxSecrets: options.boxSecrets } : {}),
      profileOf,
      ...options.mcp,
    });
    this.mcp = mcp;
    this.mcpSettings = new McpSettings(mcp);
    this.lifecycle.add(mcp);
    const approvals = new ToolApprovals(
      {
        profileOf,
        grants: options.approvalGrants ?? ((agentId) => approvalsFile(dataDir, agentId)),
        ...(options.approvalWaits ? { waits: options.approvalWaits } : {}),
      },
      mcp,
      (agentId) => this.emit({ type: 'roster', agentId, change: 'updated' }),
    );
    this.approvals = approvals;
    // In a cluster, a card's answer may be committed through another worker's gateway: its entry,
    // relayed here, reaches the call waiting on the card. The relayed turn states say which agents
    // await the user elsewhere (a prompt accepted here then asks their waiting call to yield).
    if (options.approvalWaits) {
      this.listeners.add((event) => {
        if (event.type === 'state') approvals.heardState(event.agentId, event.state);
        if (event.type !== 'entry') return;
        approvals.answeredElsewhere(event.agentId, event.entry, {
          take: async (nonce, turn) =>
            this.approvalLedger(event.agentId, await this.existing(event.agentId)).take(nonce, turn),
        });
      });
    }
    const contextLayers = options.contextLayers ?? (() => []);
    // Each model call fitted into the model's window (context/compaction.ts).
    const calibrations = new CalibrationBook(dataDir);
    this.lifecycle.add({ hostClosed: () => calibrations.settled() });
    const compactions = new AgentCompactions(
      {
        provider: () => this.provider,
        window: (model) => this.settings.contextWindow(model).tokens,
      },
      calibrations,
    );
    // Background commands and subagents, per agent (subagents/agent-background.ts).
    const backgrounds = new AgentBackgrounds({
      dataDir,
      ...(options.taskBooks ? { taskBook: options.taskBooks } : {}),
      ...(options.taskOutputs ? { taskOutput: options.taskOutputs } : {}),
      log: (line) => this.config.log(line),
      provider: () => this.provider,
      // The tools of the moment: the catalog is made again when the model changes.
      tools: () => this.config.tools,
      writePoints,
      emit: (event) => this.emit(event),
      // A child sees the images its own tools return, as its parent would (its uploads: none).
      childLayers: (child) => [imageLayer(child, () => this.vision())],
      childCompaction: (child) => compactions.for(child).compaction,
    });
    this.backgrounds = backgrounds;
    this.lifecycle.add(backgrounds);
    const routines = new Routines({
      dataDir,
      clock: options.routineClock ?? systemClock,
      ...(options.routineBooks ? { books: options.routineBooks } : {}),
      minIntervalS: minIntervalFromEnv(env),
      defaultTimeZone: boxTimeZone(env),
      deliver: async (id, nonce, input) => (await this.existing(id)).deliver(nonce, input),
      exists: async (id) =>
        this.existing(id).then(
          () => true,
          () => false,
        ),
      emit: (event) => this.emit(event),
      record: async (id, event) => {
        (await this.existing(id)).writer.appendEntries([
          { id: `ev-${randomUUID()}`, kind: 'event', event, timestampMs: Date.now() },
        ]);
      },
      writePoints,
    });
    this.routines = routines;
    this.lifecycle.add(routines);
    const memories = new MemoryBook(options.memory ?? memoryFiles(dataDir));
    this.memories = memories;
    this.lifecycle.add({ agentDeleted: (id) => memories.agentDeleted(id) });
    const profiles = new AgentProfiles({
      provider: () => this.provider?.provider ?? null,
      emit: (event) => this.emit(event),
    });
    this.profiles = profiles;
    this.config = {
      stores,
      provider: this.provider,
      tools,
      sendReminderEvery:
        options.sendReminderEvery ??
        (Number.isInteger(everyFromEnv) && everyFromEnv > 0 ? everyFromEnv : DEFAULT_SEND_REMINDER_EVERY),
      maxStepsPerTurn: options.maxStepsPerTurn ?? DEFAULT_MAX_STEPS_PER_TURN,
      toolEnv: toolEnvironment(env),
      confinement,
      disks,
      emit: (event) => this.emit(event),
      now: options.now ?? Date.now,
      isFocused: (id) => this.focused === id,
      turnsElsewhere: options.queuedTurns === true,
      writePoints,
      inboxRetryMs: options.inboxRetryMs ?? 2000,
      log: options.log ?? ((line) => process.stderr.write(`${line}\n`)),
      acceptsFirst: options.acceptsFirst ?? new AcceptsFirst(),
      // The images of the model view come first: later layers (pruning) see them as the model will.
      contextLayers: (agent) => [imageLayer(agent, () => this.vision()), ...contextLayers(agent)],
      toolGates: [approvals, ...(options.toolGates ?? [])],
      extensions: (agent) => [
        backgrounds.for(agent, agent.stores),
        routines.for(agent),
        memories.extensionFor(agent),
        { toolServices: () => ({ profile: profileHandler(profiles.editorFor(agent)) }) },
        compactions.for(agent),
        mcp.for(agent.id),
        ...(options.extensions?.(agent) ?? []),
      ],
    };
  }

  /** Whether the model is shown images: `SENDBOX_MODEL_VISION=0` (or `false`) says no, else the panel's switch. */
  vision(): boolean {
    return this.settings.vision();
  }

  /** The web tools' state, for the settings panel: which search backend, or how to enable one. */
  webStatus(): WebSearchChoice['status'] {
    return { ...this.searchStatus };
  }

  modelStatus(): ModelStatus {
    return { ...this.status };
  }

  /** Reads `model-settings.json` and applies it (unless the environment configures the model). */
  async loadModelSettings(): Promise<void> {
    await this.settings.load();
    this.useModel(this.settings.choose());
  }

  modelSettings(): SettingsView {
    return { ...this.settings.view(this.status.model), webSearch: this.webStatus() };
  }

  /** "Test connection": one small call with the settings as typed (unsaved); what is wrong, named. */
  async testModelSettings(input: ModelSettingsInput): Promise<ConnectionCheck> {
    const candidate = this.settings.candidate(input, () => undefined);
    return checkConnection(candidate.provider!, candidate.where);
  }

  /** Saves the panel's settings and swaps the model without a restart (turns read it as they start). */
  async updateModelSettings(input: ModelSettingsInput): Promise<SettingsView> {
    this.useModel(await this.settings.update(input));
    return this.modelSettings();
  }

  private useModel(chosen: ProviderFromEnv): void {
    this.provider = chosen.provider;
    this.status = chosen.status;
    this.config.provider = chosen.provider;
    this.config.tools = this.catalogFor(this.settings.xaiModel());
    // Read-only rows (no model) may have become writable.
    for (const id of this.sessions.keys()) this.emit({ type: 'roster', agentId: id, change: 'updated' });
  }

  sandboxStatus(): SandboxStatus {
    return { ...this.confinement.status };
  }

  async sandboxDisk(): Promise<SandboxDiskStatus> {
    const { holders, ...disk } = await this.disks.status(path.join(this.dataDir, 'sandboxes'));
    const named = [];
    for (const holder of holders) {
      const agentId = path.basename(holder.sandbox);
      if (!isSafeAgentId(agentId)) continue;
      const name = await readProfile(agentPaths(this.dataDir, agentId).profile).then(
        (profile) => profile.name,
        () => null,
      );
      named.push({ agentId, name, bytes: holder.bytes, overQuota: holder.overQuota });
    }
    return { ...disk, holders: named };
  }

  /** An agent created without a name is named from its first prompt (`sendPrompt`). */
  async createAgent(input: CreateAgentInput): Promise<RosterRow> {
    // No name is an untitled agent (its first prompt names it); a name is held to updateAgent's rule.
    const name = input.name?.trim() ?? '';
    if (name.length > MAX_NAME_CHARS) {
      throw new HostError(
        `createAgent: the name is longer than ${MAX_NAME_CHARS} characters; shorten it`,
        400,
      );
    }
    const id = randomUUID();
    const paths = agentPaths(this.dataDir, id);
    const now = this.config.now();
    const profile: Profile = {
      name,
      description: input.description ?? '',
      harness: input.harness ?? 'box',
      title: '',
      createdAt: now,
      updatedAt: now,
    };
    let session: AgentSession;
    try {
      await ensurePrivateDir(paths.agentDir);
      await writeProfile(paths.profile, profile);
      session = await this.session(id);
      // Grok Bot leaves a created agent focused, its store locked (§9).
      await this.focus(session);
    } catch (error) {
      throw await this.undoNewAgent(id, `the new agent ${JSON.stringify(name)}`, error);
    }
    this.emit({ type: 'roster', agentId: id, change: 'created' });
    return this.rowOf(session);
  }

  async listAgents(): Promise<RosterRow[]> {
    if (this.closed) throw new Error('the agent host is closed');
    const { stores, turnsElsewhere } = this.config;
    let names: string[];
    // A cluster's agents, each with a mark that moves when a refresh would find something new.
    const marks = stores.rosterMarks ? await stores.rosterMarks() : undefined;
    try {
      if (marks) names = [...marks.keys()];
      else names = stores.agentIds ? await stores.agentIds() : await readdir(agentsRoot(this.dataDir));
    } catch (error) {
      if (stores.agentIds) throw error;
      return [];
    }
    const rows: RosterRow[] = [];
    const toRead: string[] = [];
    for (const id of names) {
      if (!isSafeAgentId(id)) continue;
      // In a cluster other workers write every agent: no row is kept, each is read now.
      if (!this.sessions.has(id) && !turnsElsewhere) {
        // A closed agent: its row from the roster while its files are as they were, no agent without a profile.
        const cached = this.roster.cached(id);
        if (cached === null) continue;
        if (cached) {
          rows.push({ ...cached, readOnly: cached.readOnly || !this.provider });
          continue;
        }
      }
      toRead.push(id);
    }
    // Several at once: an agent's open waits mostly on its reads (a cluster's: round trips).
    await inBatches(toRead, LIST_READS_AT_ONCE, async (id) => {
      try {
        const session = await this.session(id);
        // Its last entry may come from another writer; in a cluster, only if its mark moved since.
        const mark = marks?.get(id);
        if (
          (this.focused !== id || turnsElsewhere) &&
          (mark === undefined || this.listedMarks.get(id) !== mark)
        ) {
          await session.refresh();
          if (mark !== undefined && !session.busy) this.listedMarks.set(id, mark);
        }
        if (!turnsElsewhere) this.roster.record(id, this.storedRow(session));
        rows.push(this.rowOf(session));
      } catch {
        // An agent whose files cannot be read is left out of the roster rather than failing it.
        this.sessions.delete(id);
      }
    });
    return rows.sort((a, b) => b.lastActivityAt - a.lastActivityAt || a.name.localeCompare(b.name));
  }

  async openAgent(id: string): Promise<SequencedEntry[]> {
    return (await this.open(id)).entries();
  }

  async openAgentJson(id: string): Promise<string> {
    return (await this.open(id)).entriesJson();
  }

  async todos(id: string): Promise<TodoItem[]> {
    return (await this.existing(id)).todos.map((item) => ({ ...item }));
  }

  async pendingInputs(id: string): Promise<PendingInput[]> {
    return (await this.existing(id)).pendingInputs();
  }

  /** The ids of the agent's secret requests whose secret its store does not hold (agent/secrets-held.ts). */
  async secretRequestsNotHeld(id: string): Promise<string[]> {
    const session = await this.existing(id);
    return answeredSecretRequestsNotHeld(session.entries(), await session.secrets.all());
  }

  /**
   * What start-up owes a data dir after a crash: temp files of interrupted writes are removed, and
   * every agent with pending inputs or a turn the box never finished is opened, which goes on with
   * that turn (or closes it) and resumes the inputs in order (AgentSession.load). Others stay closed
   * until asked for.
   */
  async recover(): Promise<void> {
    // gateway.json and the lock's owner file are written atomically while turns may already run;
    // so is the search's cache, which a box killed while it warmed leaves a temp file of.
    await removeAtomicTemps(this.dataDir);
    await removeAtomicTemps(searchCacheDir(this.dataDir));
    let names: string[];
    try {
      names = await readdir(agentsRoot(this.dataDir));
    } catch {
      return;
    }
    const recovering: string[] = [];
    await inBatches(names.filter(isSafeAgentId), RECOVERY_CONCURRENCY, async (id) => {
      const paths = agentPaths(this.dataDir, id);
      await removeAtomicTemps(paths.agentDir);
      await new AttachmentStore(paths.attachments).removeTemps();
      await removeSandboxTemps(paths.sandbox, UPLOADS_FOLDER);
      if (needsRecovery(paths.storeDb)) recovering.push(id);
    });
    // Every agent is read before any takes work (an interrupted turn goes on first, or is closed
    // without a model), so start-up is not slowed by turns of the agents recovered first.
    const opened: AgentSession[] = [];
    await inBatches(recovering, RECOVERY_CONCURRENCY, async (id) => {
      try {
        opened.push(await this.open_(id));
      } catch {
        // An agent whose files cannot be read is left for listAgents/openAgent to report.
        this.sessions.delete(id);
      }
    });
    for (const session of opened) session.resume();
  }

  async entriesAfter(id: string, afterSeq: number): Promise<SequencedEntry[]> {
    return (await this.current(id)).entries(afterSeq);
  }

  async fetchAttachment(agentId: string, sha256: string): Promise<boolean> {
    return (await this.config.stores.fetchAttachment?.(agentId, sha256)) ?? false;
  }

  async entryById(agentId: string, entryId: string): Promise<SequencedEntry | undefined> {
    return (await this.current(agentId)).entryById(entryId);
  }

  async deleteAgent(id: string): Promise<void> {
    const session = await this.existing(id);
    if (session.busy) throw new HostError(`agent ${id} is working; delete it when its turn has ended`, 409);
    const children = this.backgrounds.childIds(id);
    await this.config.stores.remove?.(id);
    await session.close();
    this.sessions.delete(id);
    if (this.focused === id) this.focused = null;
    const paths = agentPaths(this.dataDir, id);
    await rm(paths.agentDir, { recursive: true, force: true });
    await rm(paths.transcriptDir, { recursive: true, force: true });
    await rm(paths.sandbox, { recursive: true, force: true });
    for (const child of children)
      if (isSubagentId(child))
        await rm(agentPaths(this.dataDir, child).transcriptDir, { recursive: true, force: true });
    await this.lifecycle.agentDeleted(id, paths);
    this.emit({ type: 'roster', agentId: id, change: 'deleted' });
  }

  async duplicateAgent(id: string): Promise<RosterRow> {
    const source = await this.existing(id);
    await source.idle();
    // Another writer may have written it: another agent window, or in a cluster any worker.
    if (this.focused !== id || this.config.turnsElsewhere) await source.refresh();
    const newId = randomUUID();
    const children = this.backgrounds.of(id)?.childCopies() ?? ChildCopies.of([]);
    try {
      return await this.copyAgent(source, newId, children);
    } catch (error) {
      const undone = await this.undoNewAgent(newId, `the copy of agent ${id}`, error);
      for (const child of children.ids.values())
        await rm(agentPaths(this.dataDir, child).transcriptDir, { recursive: true, force: true }).catch(
          () => undefined,
        );
      throw undone;
    }
  }

  private async copyAgent(source: AgentSession, newId: string, children: ChildCopies): Promise<RosterRow> {
    const id = source.id;
    const from = source.paths;
    const to = agentPaths(this.dataDir, newId);
    await ensurePrivateDir(to.agentDir);
    await ensurePrivateDir(to.transcriptDir);
    const now = this.config.now();
    await writeProfile(to.profile, {
      ...source.profile,
      name: `${source.profile.name} (copy)`,
      createdAt: now,
      updatedAt: now,
    });
    // Attachments first, so entries that point at them never dangle.
    const { stores } = this.config;
    if (stores.copyAttachments) await stores.copyAttachments(id, newId);
    else
      await cp(from.attachments, to.attachments, { recursive: true, errorOnExist: false }).catch(
        ignoreMissing,
      );
    const memory = this.memories.of(newId).scope('agent');
    for (const entry of await this.memories.of(id).scope('agent').entries())
      await memory.write(entry.text, entry.createdAt);
    // Ledger entries: same ids and order; file URLs into the old attachment folder are pointed at the copy.
    const oldPrefix = pathToFileURL(from.attachments).href;
    const newPrefix = pathToFileURL(to.attachments).href;
    const entries = source.entries().map(({ seq: _seq, ...entry }) => {
      const text = JSON.stringify(entry)
        .split(JSON.stringify(oldPrefix).slice(1, -1))
        .join(JSON.stringify(newPrefix).slice(1, -1))
        .split(JSON.stringify(from.attachments).slice(1, -1))
        .join(JSON.stringify(to.attachments).slice(1, -1));
      return JSON.parse(children.rename(text)) as LedgerEntry;
    });
    // Through the backend's stores (a cluster's rows, the data dir's files), before the copy is opened.
    const copy = await stores.open(newId);
    try {
      // The JSONL as it is (its complete lines), naming the copy's own children (child-copies.ts).
      const jsonl = await source.stores.transcript.read();
      const whole = jsonl.slice(0, jsonl.lastIndexOf('\n') + 1);
      if (whole) copy.transcript.append(children.rename(whole));
      copy.ledger.appendEntries(entries);
      copy.ledger.setKv('metadata', { agentId: newId, createdAt: now, duplicatedFrom: id });
    } finally {
      copy.close();
    }
    await mkdir(to.sandbox, { recursive: true, mode: 0o700 });
    const session = await this.session(newId);
    const copied = this.backgrounds.of(newId);
    if (children.ids.size > 0 && copied)
      await this.backgrounds.of(source.id)!.copyChildrenInto(copied, children);
    this.emit({ type: 'roster', agentId: newId, change: 'created' });
    return this.rowOf(session);
  }

  /** The agent's settings, as the settings dialog shows them. */
  async agentSettings(id: string): Promise<AgentSettings> {
    const session = await this.current(id);
    return agentSettingsOf(id, await session.currentProfile(), this.provider);
  }

  /** Changes the agent's profile (profile/profile-editor.ts); the roster and open tabs are told. */
  async updateAgent(id: string, update: AgentUpdate): Promise<AgentSettings> {
    const session = await this.current(id);
    await this.profiles.editorFor(session).update(checkedUpdate(update), 'user');
    return this.agentSettings(id);
  }

  /** The agent's memory and the user's, as the memory view shows them. */
  async memory(agentId: string): Promise<MemoryView> {
    await this.existing(agentId);
    return memoryView(this.memories.of(agentId));
  }

  /** Deletes a memory entry by its exact text (the memory view's delete); 404 when there is none. */
  async forgetMemory(input: { agentId: string; scope: MemoryScope; text: string }): Promise<MemoryView> {
    await this.existing(input.agentId);
    const memory = this.memories.of(input.agentId);
    await forgetEntry(memory.scope(input.scope), input.text);
    return memoryView(memory);
  }

  async sendPrompt(input: {
    agentId: string;
    prompt: string;
    clientNonce: string;
  }): Promise<{ accepted: true; duplicate: boolean }> {
    if (input.clientNonce.trim() === '')
      throw new HostError('sendPrompt: `clientNonce` must not be empty', 400);
    const session = await this.existing(input.agentId);
    const sent = await session.sendPrompt(input.prompt, input.clientNonce);
    // A card the turn waits on yields to the prompt, as a widget does: the card stays answerable.
    if (!sent.duplicate) this.approvals.yieldTo(input.agentId);
    // An untitled agent takes its first prompt's words as its name (a rename: Grok Bot's name-changed event).
    const title = session.profile.name === '' ? titleFromUserText(input.prompt) : undefined;
    if (title !== undefined && !sent.duplicate) await this.updateAgent(input.agentId, { name: title });
    return sent;
  }

  /** Regenerate the last reply, or edit the last prompt and resend (agent/revisions.ts). */
  async revisePrompt(input: {
    agentId: string;
    clientNonce: string;
    revision: PromptRevision;
  }): Promise<{ accepted: true; duplicate: boolean }> {
    return (await this.existing(input.agentId)).revisePrompt(input.revision, input.clientNonce);
  }

  /** Removes a prompt that waits for its turn; one that started cannot be (409). */
  async removeQueuedPrompt(input: { agentId: string; nonce: string }): Promise<{ removed: true }> {
    return (await this.existing(input.agentId)).removeQueued(input.nonce);
  }

  /** Hook (web Stop): aborts the agent's running turn, wherever it runs. */
  async cancelTurn(agentId: string): Promise<{ cancelled: boolean }> {
    await this.existing(agentId);
    const result = await this.stopHere(agentId);
    if (result.cancelled || !this.stopElsewhere) return result;
    return { cancelled: this.stopElsewhere(agentId) };
  }

  /** A prompt sent through another gateway: a call of the agent's turn here waiting on a card ends its wait. */
  yieldHere(agentId: string): void {
    this.approvals.yieldHere(agentId);
  }

  /** Aborts the agent's turn if it runs in this host (its session's, or a turn job's here). */
  async stopHere(agentId: string): Promise<{ cancelled: boolean }> {
    const session = await this.sessions.get(agentId)?.catch(() => undefined);
    const here = session?.cancelTurn() ?? { cancelled: false };
    const result = here.cancelled ? here : this.turnSessions.cancel(agentId);
    if (result.cancelled) await this.lifecycle.turnCancelled(agentId);
    return result;
  }

  /** A Stop stored elsewhere (a cluster's): aborts the agent's turn job here if its turn started by ledger seq `seq`. */
  async stopTurnStartedBy(agentId: string, seq: number): Promise<void> {
    if (this.turnSessions.cancelStartedBy(agentId, seq).cancelled)
      await this.lifecycle.turnCancelled(agentId);
  }

  /** The agent's background tasks: running ones, then those that ended recently. */
  async listTasks(agentId: string): Promise<TaskView[]> {
    await this.existing(agentId);
    return this.backgrounds.of(agentId)?.views() ?? [];
  }

  /** Stops one background task: a command's whole process tree, or a subagent's turn. */
  async stopTask(agentId: string, taskId: string): Promise<{ stopped: boolean }> {
    await this.existing(agentId);
    return { stopped: this.backgrounds.stop(agentId, taskId) };
  }

  /**
   * Stops a background task this process runs, for a stop asked through another gateway
   * (cluster/task-stops.ts): no session is opened; false when it does not run here.
   */
  stopTaskHere(agentId: string, taskId: string): boolean {
    return this.backgrounds.stopHere(agentId, taskId);
  }

  /** The agent's routines, their next run and latest runs (gateway `listRoutines`). */
  async listRoutines(agentId: string): Promise<RoutineView[]> {
    await this.existing(agentId);
    return this.routines.list(agentId);
  }

  /** Pauses, resumes, deletes or changes one routine (gateway `updateRoutine`); null once deleted. */
  async updateRoutine(agentId: string, change: RoutineUpdate): Promise<{ routine: RoutineView | null }> {
    await this.existing(agentId);
    try {
      return { routine: await this.routines.update(agentId, change) };
    } catch (error) {
      if (error instanceof StateError) throw new HostError(error.message, error.cause === 404 ? 404 : 400);
      throw error;
    }
  }

  /** A subagent's steps, from its transcript (404 when this agent started no such child). */
  async openSubagent(agentId: string, subagentId: string): Promise<SequencedEntry[]> {
    await this.existing(agentId);
    const steps = await this.backgrounds.of(agentId)?.childSteps(subagentId);
    if (!steps) throw new HostError(`agent ${agentId} has no subagent ${subagentId}`, 404);
    return steps;
  }

  /** Hook (web Retry): re-runs the agent on its conversation after a failed model call. */
  async retryTurn(agentId: string): Promise<{ accepted: true }> {
    return (await this.existing(agentId)).retryTurn();
  }

  async answerWidget(input: {
    agentId: string;
    messageId: string;
    answer: string | string[];
  }): Promise<{ accepted: true }> {
    return (await this.existing(input.agentId)).answerWidget(input.messageId, input.answer);
  }

  /** The box secrets' names (never a value), for the Connectors panel. */
  listBoxSecrets(): Promise<BoxSecretsView> {
    return this.mcp.boxSecretsView();
  }

  async setBoxSecret(input: { name: string; value: string | undefined }): Promise<BoxSecretsView> {
    if (!SECRET_NAME_PATTERN.test(input.name)) {
      throw new HostError(
        `setBoxSecret: ${JSON.stringify(input.name)} is not a secret name (letters, digits and _, not starting with a digit)`,
        400,
      );
    }
    return this.mcp.setBoxSecret(input.name, input.value);
  }

  async startMcpConnect(input: {
    agentId?: string;
    server: string;
    redirectUrl: string;
  }): Promise<ConnectStart> {
    if (input.agentId !== undefined) await this.existing(input.agentId);
    try {
      return await this.mcp.beginConnect(input.agentId, input.server, input.redirectUrl);
    } catch (error) {
      throw new HostError(`cannot connect ${input.server}: ${(error as Error).message}`, 502);
    }
  }

  async finishMcpConnect(input: {
    state: string;
    code: string;
  }): Promise<{ server: string; agentId?: string }> {
    let done: { server: string; agentId?: string };
    try {
      done = await this.mcp.finishConnect(input.state, input.code);
    } catch (error) {
      throw new HostError((error as Error).message, 400);
    }
    // Connected from the settings panel: no conversation to tell.
    const session = done.agentId === undefined ? null : await this.existing(done.agentId).catch(() => null);
    session?.writer.appendEntries([
      {
        id: `connected-${done.server}-${randomUUID()}`,
        kind: 'notice',
        text: `Connected ${done.server}: your agent can use it now.`,
        timestampMs: Date.now(),
      },
    ]);
    return done;
  }

  /** Answers an approval card (approvals/gate.ts): accepted once per card, across restarts too. */
  async answerToolApproval(input: {
    agentId: string;
    entryId: string;
    decision: ApprovalDecision;
  }): Promise<{ accepted: true; resumed: boolean }> {
    const session = await this.existing(input.agentId);
    return this.approvals.answer(
      input.agentId,
      this.approvalLedger(input.agentId, session),
      input.entryId,
      input.decision,
    );
  }

  /** What answering an agent's approval cards, and taking an answer, needs of its session. */
  private approvalLedger(agentId: string, session: AgentSession): ApprovalLedger {
    return {
      entries: () => this.entriesAfter(agentId, 0),
      append: (entry) => void session.writer.appendEntries([entry]),
      deliver: (nonce, answer) => session.deliver(nonce, answer),
      take: async (nonce, turn) => {
        const marked = session.stores.inbox.markStarted(nonce, turn);
        this.emit({ type: 'inbox', agentId, pending: session.pendingInputs() });
        await marked;
      },
    };
  }

  async submitSecret(input: { agentId: string; messageId: string; value: string }): Promise<{ saved: true }> {
    return (await this.existing(input.agentId)).submitSecret(input.messageId, input.value);
  }

  async uploadFile(input: UploadInput): Promise<SequencedEntry> {
    const fileName = input.fileName.trim();
    if (fileName === '') throw new HostError('uploadFile: `fileName` must not be empty', 400);
    // Caught up first: a retry of an upload another gateway of a cluster recorded gets its entry.
    return (await this.current(input.agentId)).uploadFile(fileName, input.bytes, input.clientNonce);
  }

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when the agent has no queued or running turn (tests, CLI). */
  async idle(id: string): Promise<void> {
    await (await this.existing(id)).idle();
  }

  /**
   * Runs the agent's accepted inputs behind the turn job's lease (`job.epoch`), as the agent's
   * session would without `queuedTurns`: a turn a dead worker cut goes on first
   * (agent/turn-resume.ts; closed instead with `closeCutTurns`, the job's last try), then each
   * pending input gets its turn. The session is kept for the agent's next job here
   * (host/turn-sessions.ts). Resolves when none is left, or once `job.signal` aborts (the lease
   * was lost: the running turn is stopped, its tools killed).
   */
  async runQueuedTurns(agentId: string, job: QueuedTurnsJob): Promise<void> {
    if (this.closed) throw new Error('the agent host is closed');
    await this.turnSessions.run(agentId, job);
    // The agent's own session here (the gateway's) reads what the turns wrote.
    await (await this.sessions.get(agentId)?.catch(() => undefined))?.reload();
  }

  /** The session a turn job left here for the agent's next job (tests and diagnostics). */
  keptTurnSession(id: string): AgentSession | undefined {
    return this.turnSessions.kept(id);
  }

  /** How many agents are open (their store and JSONL read): diagnostics and tests. */
  get openAgents(): number {
    return this.sessions.size;
  }

  /** The live session of an agent (tests and the gateway's diagnostics). */
  async sessionOf(id: string): Promise<AgentSession> {
    return this.existing(id);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A turn waiting on an approval card would never settle: it is stopped, its card left open.
    for (const id of this.approvals.closeWaits()) (await this.sessions.get(id))?.cancelTurn();
    const sessions = await Promise.allSettled([...this.sessions.values()]);
    await this.roster.settled();
    for (const result of sessions) {
      if (result.status !== 'fulfilled') continue;
      const row = this.storedRow(result.value);
      await result.value.close();
      // Closing folds the WAL into store.db: the row is stamped with the files as closed.
      this.roster.record(result.value.id, row);
    }
    await this.turnSessions.close();
    this.roster.close();
    this.sessions.clear();
    this.listeners.clear();
    await this.lifecycle.hostClosed();
  }

  // -------------------------------------------------------------------------

  private emit(event: HostEvent): void {
    this.routines.onEvent(event);
    if (event.type === 'roster' && event.change === 'deleted') this.roster.removed(event.agentId);
    else if (event.type !== 'draft') this.roster.changed(event.agentId);
    this.relay.local(event);
  }

  /** Hands an event (this host's, or another worker's through the relay) to every subscriber. */
  private deliver(event: HostEvent): void {
    if (event.type === 'routines') this.routines.changedElsewhere(event.agentId);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure is its own; the host keeps going.
      }
    }
  }

  /** Focuses the agent (caught up with its files first) and marks it read. */
  private async open(id: string): Promise<AgentSession> {
    const session = await this.current(id);
    await this.focus(session);
    session.unread.markRead();
    this.emit({ type: 'roster', agentId: id, change: 'updated' });
    return session;
  }

  private async focus(session: AgentSession): Promise<void> {
    if (this.focused && this.focused !== session.id) {
      const previous = this.sessions.get(this.focused);
      if (previous) (await previous).lock.release();
    }
    try {
      session.lock.hold();
    } catch (error) {
      throw new HostError(
        `agent ${session.id}: its store.db is locked by another writer (${(error as Error).message}); try again`,
        423,
      );
    }
    this.focused = session.id;
  }

  private async session(id: string): Promise<AgentSession> {
    const fresh = !this.sessions.has(id);
    const session = await this.open_(id);
    if (fresh) session.resume();
    return session;
  }

  /** The live session, opened (files read, an interrupted turn closed) but not yet resumed when new. */
  private open_(id: string): Promise<AgentSession> {
    if (this.closed) return Promise.reject(new Error('the agent host is closed'));
    let pending = this.sessions.get(id);
    if (!pending) {
      pending = AgentSession.open(id, this.config);
      this.sessions.set(id, pending);
      pending.catch(() => this.sessions.delete(id));
    }
    return pending;
  }

  /**
   * The session, caught up with its files: while an agent is not focused its store.db is not
   * locked, so another writer may have added to it. (The focused agent's lock keeps writers out.)
   */
  private async current(id: string): Promise<AgentSession> {
    const session = await this.existing(id);
    // A cluster's other workers write every agent, focused or not.
    if (this.focused !== id || this.config.turnsElsewhere) await session.refresh();
    return session;
  }

  /** The session of an agent that must exist; 404 otherwise. */
  private async existing(id: string): Promise<AgentSession> {
    if (typeof id !== 'string' || !isSafeAgentId(id))
      throw new HostError(`not a valid agent id: ${JSON.stringify(id)}`, 400);
    if (!this.sessions.has(id)) {
      const exists = this.config.stores.exists
        ? await this.config.stores.exists(id)
        : await stat(agentPaths(this.dataDir, id).profile).then(
            () => true,
            () => false,
          );
      if (!exists) throw new HostError(`no agent with id ${id}`, 404);
    }
    return this.session(id);
  }

  /**
   * A new agent whose files could not all be written leaves nothing behind: its session is
   * closed and its folders removed. Returns the error to throw (a full disk: 507).
   */
  private async undoNewAgent(id: string, what: string, error: unknown): Promise<unknown> {
    const pending = this.sessions.get(id);
    this.sessions.delete(id);
    if (this.focused === id) this.focused = null;
    if (pending) await pending.then((session) => session.close()).catch(() => undefined);
    const paths = agentPaths(this.dataDir, id);
    // A cluster's rows and objects of it too (nothing else knows the new id yet).
    await this.config.stores.remove?.(id).catch(() => undefined);
    for (const dir of [paths.agentDir, paths.transcriptDir, paths.sandbox])
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    if (error instanceof HostError) return error;
    if (isDiskFullError(error) || filesystemIsFull(this.dataDir))
      return new StoreWriteError('agent', what, error, true);
    return error;
  }

  /** The row the roster keeps: `readOnly` as the profile says (whether a model is set is decided when listing). */
  private storedRow(session: AgentSession): RosterRow {
    return { ...this.rowOf(session), readOnly: session.profile.readOnly === true };
  }

  private rowOf(session: AgentSession): RosterRow {
    const unread = session.unread.current;
    return {
      id: session.id,
      name: session.profile.name,
      description: session.profile.description,
      harness: session.profile.harness,
      updatedAt: Math.max(session.profile.updatedAt ?? 0, unread.lastActivityAt),
      lastActivityAt: unread.lastActivityAt || (session.profile.createdAt ?? 0),
      lastEntry: session.lastEntry(),
      unreadCount: unread.unreadCount,
      hasUnread: unread.unreadCount > 0 || unread.isManuallyUnread,
      awaitingUserResponse: session.awaitingUserResponse,
      awaitingApproval: this.approvals.waitsOn(session.id),
      pendingInputs: session.pendingInputs().length,
      state: session.turnState,
      readOnly: session.profile.readOnly === true || !this.provider,
    };
  }
}

/** What tool processes start from: enough to run programs, none of the host's keys. */
function toolEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: env.LANG ?? 'C.UTF-8',
    TERM: 'dumb',
  };
  if (env.TZ) out.TZ = env.TZ;
  return out;
}

/** How many agents start-up reads at once (their files are read asynchronously; SQLite calls are not). */
const RECOVERY_CONCURRENCY = 4;
/** How many agents a list opens or refreshes at once (bench/cluster-roster.ts). */
const LIST_READS_AT_ONCE = 8;

async function inBatches<T>(
  items: readonly T[],
  size: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}

/** Rethrows anything but a missing file (a copy of what the agent never had is no copy). */
function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}

/** The ids of the agents in the data dir. */
async function agentIds(dataDir: string): Promise<string[]> {
  return readdir(agentsRoot(dataDir)).then(
    (names) => names.filter(isSafeAgentId),
    () => [],
  );
}

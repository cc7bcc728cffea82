/**
 * One agent, live: its files, its model conversation, its turn state and the
 * per-turn writes. Turns of one agent run one after another (a queue); turns
 * of different agents run concurrently, each agent with its own writer.
 *
 * Everything the session knows at start comes from its files (the ledger and
 * the JSONL), so a crash mid-turn costs nothing but that turn: the next
 * prompt continues the conversation.
 */
import { randomUUID } from 'node:crypto';
import { sendMessageFeature, userAttachmentId } from '@sendbox/protocol';
import type { ModelMessage, ModelProvider } from '../providers/types.ts';
import type { Confinement } from '../sandbox/confinement.ts';
import type { SandboxDisks } from '../sandbox/disk-quota.ts';
import { scrubberFor, type Scrubber } from '../secrets/scrub.ts';
import type { AttachmentsStore } from '../stores/attachments.ts';
import type { SecretsStore } from '../stores/secrets.ts';
import type { JsonObject } from '@sendbox/txcript';
import type { DiskRoom, HostTool, TodoItem, ToolContext } from '../tools/types.ts';
import { toolsForProfile } from '../tools/catalog.ts';
import { todosFromRecords } from '../tools/update-todos/todos-from-records.ts';
import { historyFromRecords, toolReaders } from '../context/model-view.ts';
import type { ContextLayer, LayerAgent } from '../context/model-call.ts';
import type { Compaction } from '../context/compaction.ts';
import type { ToolCallRef, ToolGate } from './tool-dispatch.ts';
import { AgentExtensions, type AgentExtension, type ExtensionAgent } from './extension.ts';
import { TranscriptWriter } from '../stores/transcript-writer.ts';
import type { AgentStores, FocusLock, StoreBackend } from '../stores/agent-stores.ts';
import type { AgentPaths } from '../stores/files/layout.ts';
import { LedgerView } from '../stores/ledger-view.ts';
import type { AcceptOptions, InboxInput, InboxRow, InboxStore, PendingInput } from '../stores/inbox.ts';
import type { LedgerStore, SequencedEntry } from '../stores/ledger.ts';
import { readRecords, type TranscriptLog } from '../stores/transcript.ts';
import { SendReminderCounter } from '../context/send-reminder.ts';
import type { Profile } from '../stores/files/profile.ts';
import { envNameFor, QuestionBook, widgetAnswerOf } from './question-book.ts';
import { runTurn } from './turn.ts';
import { BOX_STOPPED_NOTICE, TURN_TEXTS } from './turn-texts.ts';

export { BOX_STOPPED_NOTICE, TURN_TEXTS };
import { turnDriver, type TurnHooks } from './turn-driver.ts';

import { TurnStateMachine, type TurnState } from './turn-state.ts';
import { repairOf, type TurnRepair } from './turn-closer.ts';
import { MAX_TURN_RESUMES, resumeNoteOf, resumePointOf, type ResumePoint } from './turn-resume.ts';
import { HostError } from './errors.ts';
import { StoreWriteError } from '../stores/errors.ts';
import { type HostEvent } from './events.ts';
import { uploadNames } from './upload-placement.ts';
import { ledgerFacts, type PendingUpload } from './ledger-facts.ts';
import { recordUpload, stageUpload, uploadEntry } from './upload-staging.ts';
import {
  answerNonce,
  inputNonceOf,
  modelTextOf,
  pendingView,
  userEntryFor,
  revisedUploads,
  uploadsBefore,
  userRecordTexts,
  type UserEntryFields,
} from './inputs.ts';
import { REMOVED_DETAIL, removablePrompt, revisionInput, type PromptRevision } from './revisions.ts';
import type { WritePoints } from '../stores/write-points.ts';
import type { AcceptsFirst } from './accepts-first.ts';
import { UnreadBook } from './unread.ts';

export { envNameFor, type Question } from './question-book.ts';

export interface SessionConfig {
  /** What capabilities add to each model call's view of this agent (memory, compaction): context/model-call.ts. */
  contextLayers(agent: LayerAgent): readonly ContextLayer[];
  /** What runs before every checked tool call (approvals): agent/tool-dispatch.ts. */
  toolGates: readonly ToolGate[];
  /** What capabilities working beside the agent's turns add at its seams (agent/extension.ts); read lazily. */
  extensions(agent: ExtensionAgent): readonly AgentExtension[];
  /** Where the agent's ledger, transcript, inbox, attachments and secrets live (stores/agent-stores.ts). */
  stores: StoreBackend;
  provider: ModelProvider | null;
  tools: readonly HostTool[];
  sendReminderEvery: number;
  maxStepsPerTurn: number;
  /** Environment every tool process starts from (never the host's own: it holds API keys). */
  toolEnv: Readonly<Record<string, string>>;
  /** How tool processes are confined; the sandbox folder is prepared for it. */
  confinement: Confinement;
  /** The sandboxes' disk quota. */
  disks?: SandboxDisks;
  emit(event: HostEvent): void;
  now(): number;
  /** Every durable write passes one (crash and full-disk tests). */
  writePoints: WritePoints;
  /** How long a full disk holds the inbox back before the next try. */
  inboxRetryMs: number;
  /** True when this agent is the focused one (its entries do not count as unread). */
  isFocused(id: string): boolean;
  /**
   * Accepted inputs are run by a turn worker, not by this session (the cluster's turn queue,
   * cluster/turn-worker.ts): this session accepts and shows, and never starts, resumes or closes a
   * turn itself.
   */
  turnsElsewhere?: boolean;
  /** A cut turn found on open is closed with a notice, not resumed (the turn job's last try). */
  closeCutTurns?: boolean;
  /** Before each turn (a cluster worker places uploads other gateways took: upload-placement.ts). */
  beforeTurn?(entries: readonly SequencedEntry[]): Promise<void>;
  /** Inputs being accepted go before turns start (agent/accepts-first.ts); one per host. */
  acceptsFirst?: AcceptsFirst;
  /** Where the box's own error lines go (the terminal's stderr). */
  log(line: string): void;
}

export class AgentSession implements ExtensionAgent {
  readonly paths: AgentPaths;
  readonly state: TurnStateMachine;
  readonly todos: TodoItem[] = [];
  readonly feature = sendMessageFeature({ enabled: true });
  readonly questions = new QuestionBook();
  /** Non-send tool calls in a row before the reminder (withInjections applies it per model call). */
  readonly sendReminderEvery: number;
  readonly contextLayers: readonly ContextLayer[];
  readonly compaction: Compaction | undefined;
  readonly toolGates: readonly ToolGate[];
  private readonly extensions: AgentExtensions;
  private currentScrubber: Scrubber = scrubberFor(new Map());
  writer!: TranscriptWriter;
  private history: ModelMessage[] = [];
  private nextTurn = 0;
  /** A turn a dead box cut, found on open: resumed (or closed) before the next input (turn-resume.ts). */
  private cutTurn: number | null = null;
  private pendingUploads: PendingUpload[] = [];
  /** The turn `playTurn` runs now, if any. */
  private playing: number | null = null;
  /** What stopped the last run of the inputs, outside any turn (cleared when they are tried again). */
  turnLoopError: Error | null = null;
  /** Nonces of prompts the ledger holds (agents written before the inbox, or by another writer). */
  private nonces = new Set<string>();
  /** The turn each started input's user message opened, by nonce (from the ledger). */
  private startedTurns = new Map<string, number>();
  /** Uploads by their client nonce: a repeated upload gets its first entry back. */
  private uploadsByNonce = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private draining = false;
  /** A regenerate or edit being accepted: a second one meanwhile is refused (agent/revisions.ts). */
  private revising = false;
  /** A retry of the inbox after a full disk held an input back. */
  private retryTimer: NodeJS.Timeout | null = null;
  /** Aborts the running turn (`cancelTurn`); null between turns. */
  private turnAbort: AbortController | null = null;
  /** The ledger's entries in memory (see LedgerView); the last row of store.db, for the roster. */
  private readonly view = new LedgerView();
  /** A refresh in progress: turns wait for it, so none writes while the files are re-read. */
  private refreshing: Promise<void> = Promise.resolve();
  profile!: Profile;
  readonly unread: UnreadBook;

  private constructor(
    readonly id: string,
    private readonly config: SessionConfig,
    public stores: AgentStores,
  ) {
    this.paths = stores.local;
    this.extensions = new AgentExtensions(config.extensions(this));
    this.contextLayers = [
      ...config.contextLayers({ id, paths: this.paths, entries: () => this.view.all() }),
      ...this.extensions.contextLayers,
    ];
    this.compaction = this.extensions.compaction;
    this.toolGates = config.toolGates;
    // The counter checks the threshold (a bad one fails here, not at the first model call).
    this.sendReminderEvery = new SendReminderCounter(config.sendReminderEvery).threshold;
    this.state = new TurnStateMachine('idle', (state) => config.emit({ type: 'state', agentId: id, state }));
    this.unread = new UnreadBook(
      () => this.ledger,
      () => config.now(),
      () => config.isFocused(id),
    );
  }

  static async open(id: string, config: SessionConfig): Promise<AgentSession> {
    const session = new AgentSession(id, config, await config.stores.open(id));
    try {
      await session.load();
    } catch (error) {
      session.closeStores();
      session.extensions.closed();
      throw error;
    }
    return session;
  }

  get attachments(): AttachmentsStore {
    return this.stores.attachments;
  }

  get secrets(): SecretsStore {
    return this.stores.secrets;
  }

  /** Held while the agent is focused (the host takes it on openAgent). */
  get lock(): FocusLock {
    return this.stores.focus;
  }

  private get ledger(): LedgerStore {
    return this.stores.ledger;
  }

  private get transcript(): TranscriptLog {
    return this.stores.transcript;
  }

  private get inbox(): InboxStore {
    return this.stores.inbox;
  }

  get tools(): readonly HostTool[] {
    return toolsForProfile(this.config.tools, this.profile);
  }

  get toolEnv(): Readonly<Record<string, string>> {
    return this.config.toolEnv;
  }

  /** The agent's share of the sandboxes' disk quota. */
  get disk(): DiskRoom | undefined {
    const disks = this.config.disks;
    return disks && { reserve: (bytes) => disks.reserve(this.paths.sandbox, bytes) };
  }

  /** The profile's network allowlist, as profile.json says now. */
  async allowDomains(): Promise<readonly string[]> {
    return (await this.currentProfile()).sandbox?.allowDomains ?? [];
  }

  /** The profile, read again when it changed (the operator edits it by hand, `updateAgent` rewrites it). */
  async currentProfile(): Promise<Profile> {
    if (this.stores.profile.changed()) this.profile = await this.stores.profile.read();
    return this.profile;
  }

  scrubber(): Scrubber {
    return this.currentScrubber;
  }

  toolServices(call: ToolCallRef): Partial<ToolContext> {
    return this.extensions.toolServices(call);
  }

  now(): number {
    return this.config.now();
  }

  /** True while a turn runs or inputs wait for their turn (without a model, none will run). */
  get busy(): boolean {
    return (
      this.draining ||
      this.cutTurn !== null ||
      (this.config.provider !== null && !this.config.turnsElsewhere && this.inbox.pending().length > 0)
    );
  }

  /** WakeDoor (agent/extension.ts): nothing runs or waits, and a model may answer. */
  get free(): boolean {
    return !this.busy && this.config.provider !== null && !this.profile.readOnly;
  }

  /** WakeDoor: an input of the host's (background work ended) is accepted like a prompt. */
  async wake(nonce: string, input: InboxInput): Promise<void> {
    await this.accept(nonce, input);
  }

  get turnState(): TurnState {
    return this.state.state;
  }

  /** Reads everything from the stores: profile, ledger, transcript history, secrets. */
  private async load(): Promise<void> {
    // Its uid, for the tools its turns run; a session whose turns run elsewhere runs no tool (a
    // cluster gateway's: claiming a uid was 40 % of the CPU of listing agents it had not opened).
    if (!this.config.turnsElsewhere) await this.config.confinement.prepare(this.paths.sandbox);
    this.profile = await this.stores.profile.read();
    this.writer = new TranscriptWriter(
      this.transcript,
      this.ledger,
      () => this.currentScrubber,
      (entries) => this.onEntries(entries),
      this.config.writePoints,
    );
    this.currentScrubber = scrubberFor(await this.secrets.all());
    this.unread.reload();
    if (this.ledger.getKv('metadata') === undefined) {
      this.ledger.setKv('metadata', {
        agentId: this.id,
        createdAt: this.profile.createdAt ?? this.config.now(),
      });
    }
    this.view.readAll(this.ledger);
    this.deriveFromLedger();
    await this.inbox.reconcile((nonce) => this.startedTurns.get(nonce));
    const records = await this.readHistory();
    this.cutTurn = null;
    await this.takeOpenTurn(() => Promise.resolve(records));
    await this.tell(() => this.extensions.opened());
  }

  /**
   * The extensions' hidden notes for the model, written before its next turn; not asked in a
   * session whose turns run elsewhere (it holds no lease: the turn worker tells on open and catch-up).
   */
  private async tell(ask: () => Promise<string[]>): Promise<void> {
    if (this.config.turnsElsewhere) return;
    const notes = await ask();
    if (notes.length === 0) return;
    this.writer.appendRecords(notes.map((text) => ({ role: 'user', blocks: [{ type: 'text', text }] })));
    await this.readHistory();
  }

  /** A turn the ledger leaves open, found when the files are read: resumed or closed (foundCutTurn). */
  private async takeOpenTurn(records: () => Promise<JsonObject[]>): Promise<void> {
    const open = this.openTurn();
    if (open === null || this.config.turnsElsewhere) return;
    // The box stopped during this turn (killed, or its last write failed).
    try {
      await this.foundCutTurn(open, await records());
    } catch (error) {
      if (!(error instanceof StoreWriteError)) throw error;
      // Still no space: the turn is closed before the next one starts.
    }
  }

  /**
   * Catches up with what others wrote since this session last ran turns, for a turn worker that
   * kept it between an agent's jobs (host/turn-sessions.ts): the inbox rows after the last one read
   * and the pending ones, the ledger rows after the last seq held, the transcript again only when
   * its last row is not the one this session knows (another worker wrote), the profile when its
   * version moved; the secrets (the scrubber) and the unread state always. A turn another worker
   * left open is found as on open. What nobody changed is not read again.
   */
  async catchUp(): Promise<void> {
    await this.inbox.load();
    this.currentScrubber = scrubberFor(await this.secrets.all());
    this.unread.reload();
    if (this.stores.profile.changed()) this.profile = await this.stores.profile.read();
    if (this.view.catchUp(this.ledger) === 'shrunk') this.view.readAll(this.ledger);
    this.deriveFromLedger();
    await this.inbox.reconcile((nonce) => this.startedTurns.get(nonce));
    const records = this.transcript.unchanged() ? null : await this.readHistory();
    await this.takeOpenTurn(async () => records ?? (await this.readHistory()));
    await this.tell(() => this.extensions.caughtUp());
  }

  /** Starts answering the inputs that were pending when the files were read (the host calls it after opening). */
  resume(): void {
    if (this.inbox.pending().length > 0 || this.cutTurn !== null) this.schedule();
    else this.extensions.ready(this);
  }

  /**
   * The last turn, when it has no `turn-ended` and the box started it (its input is in the inbox:
   * a ledger another tool wrote, such as a minted one, is not the box's to close).
   */
  private openTurn(): number | null {
    const turn = this.nextTurn - 1;
    if (turn < 0 || this.view.byId(`t${turn}e`) !== undefined) return null;
    const user = this.view.byId(`t${turn}u`) as Record<string, unknown> | undefined;
    if (!user) return null;
    const nonce = inputNonceOf(user);
    return nonce !== null && this.inbox.has(nonce) ? turn : null;
  }

  /** Turn counter, nonces, questions and answers, and the state, from the ledger entries (ledger-facts.ts). */
  private deriveFromLedger(): void {
    const facts = ledgerFacts(this.view.all(), this.inbox.pending(), this.questions, this.paths.sandbox);
    this.nonces = facts.nonces;
    this.startedTurns = facts.startedTurns;
    this.uploadsByNonce = facts.uploadsByNonce;
    this.pendingUploads = facts.pendingUploads;
    this.nextTurn = facts.nextTurn;
    this.state.restore(facts.awaitingUser ? 'awaiting-user' : 'idle');
  }

  /** The model conversation from the JSONL; the writer learns the size read, to notice another writer later. */
  private async readHistory(): Promise<JsonObject[]> {
    const objects = await readRecords(this.transcript);
    const sends = (id: string) => (this.view.byId(id) as { message?: unknown } | undefined)?.message;
    this.history = historyFromRecords(objects, toolReaders(this.config.tools), sends);
    this.todos.splice(0, this.todos.length, ...todosFromRecords(objects));
    return objects;
  }

  /** Closes and re-reads every file when no turn runs. */
  async reload(): Promise<void> {
    if (this.busy) return;
    await this.whileRefreshing(async () => {
      this.closeStores();
      this.stores = await this.config.stores.open(this.id);
      await this.load();
    });
    this.resume();
  }

  /**
   * Catches up with another writer (txcript's mint seeds an agent, then opens it) when no turn
   * runs. The ledger is append-only, so only rows after the last known seq are read; the JSONL and
   * the profile are read again only when their size or inode changed. When nothing changed this
   * costs a row count and three stats. A store.db replaced or shrunk is reloaded in full.
   */
  async refresh(): Promise<void> {
    if (this.busy) return;
    if (this.stores.replaced()) return this.reload();
    const ledger = this.view.catchUp(this.ledger);
    if (ledger === 'shrunk') return this.reload();
    const ledgerChanged = ledger === 'added';
    // Another writer may have set it, with rows (the mint) or without (opened through another gateway).
    this.unread.reload();
    const jsonlChanged = !this.transcript.unchanged();
    const profileChanged = this.stores.profile.changed();
    if (ledgerChanged) this.deriveFromLedger();
    if (!jsonlChanged && !profileChanged) return;
    await this.whileRefreshing(async () => {
      if (profileChanged) this.profile = await this.stores.profile.read();
      if (jsonlChanged) await this.readHistory();
    });
  }

  /** Runs `work` with turns held back until it ends (a turn started meanwhile would write into files being re-read). */
  private async whileRefreshing(work: () => Promise<void>): Promise<void> {
    const done = this.refreshing.then(work);
    this.refreshing = done.catch(() => undefined);
    await done;
  }

  // -------------------------------------------------------------------------
  // requests

  /** Accepts a prompt: committed in the inbox before this returns, answered in its turn. */
  async sendPrompt(prompt: string, clientNonce: string): Promise<{ accepted: true; duplicate: boolean }> {
    if (this.nonces.has(clientNonce) || this.inbox.has(clientNonce)) {
      await this.inbox.durable(clientNonce);
      return { accepted: true, duplicate: true };
    }
    this.requireModel();
    if (prompt.trim() === '') throw new HostError('prompt is empty: type a message first', 400);
    return { accepted: true, duplicate: !(await this.accept(clientNonce, { kind: 'prompt', prompt })) };
  }

  /**
   * Accepts an input the host makes for the agent (a routine's fire), once per nonce: false when
   * the nonce was accepted before (a fire repeated after a crash), once that one is durable. Its
   * turn may start as soon as it commits; this resolves once it is durable (the host repeats the
   * input until then, so a power cut loses nothing).
   */
  async deliver(nonce: string, input: InboxInput): Promise<boolean> {
    if (this.nonces.has(nonce) || this.inbox.has(nonce)) {
      await this.inbox.durable(nonce);
      return false;
    }
    const fresh = await this.accept(nonce, input, { pending: 'committed' });
    await this.inbox.durable(nonce);
    return fresh;
  }

  /** Regenerates the last reply, or resends the last prompt edited (agent/revisions.ts). */
  async revisePrompt(
    revision: PromptRevision,
    clientNonce: string,
  ): Promise<{ accepted: true; duplicate: boolean }> {
    if (this.nonces.has(clientNonce) || this.inbox.has(clientNonce)) {
      await this.inbox.durable(clientNonce);
      return { accepted: true, duplicate: true };
    }
    this.requireModel();
    const input = revisionInput(this.view.all(), this.busy || this.revising, revision);
    this.revising = true;
    try {
      await this.accept(clientNonce, input);
    } finally {
      this.revising = false;
    }
    return { accepted: true, duplicate: false };
  }

  /** Removes a prompt still waiting for its turn (agent/revisions.ts says when it cannot be). */
  async removeQueued(nonce: string): Promise<{ removed: true }> {
    removablePrompt(this.inbox.pending(), this.inbox.has(nonce) || this.nonces.has(nonce), nonce);
    if (!(await this.inbox.withdraw(nonce, REMOVED_DETAIL))) removablePrompt([], true, nonce);
    this.emitPending();
    return { removed: true };
  }

  /** Hook (web Stop button): aborts the running turn; queued turns still run after it. */
  cancelTurn(): { cancelled: boolean } {
    const abort = this.turnAbort;
    if (!abort || abort.signal.aborted) return { cancelled: false };
    abort.abort(new Error('the user stopped the turn'));
    return { cancelled: true };
  }

  /** A Stop stored while a turn ran (cluster/turn-worker.ts): cancels the turn if it started by ledger seq `seq`. */
  cancelTurnStartedBy(seq: number): { cancelled: boolean } {
    const user = this.playing === null ? undefined : this.view.byId(`t${this.playing}u`);
    return user && user.seq <= seq ? this.cancelTurn() : { cancelled: false };
  }

  /** Hook (web Retry button): a new turn on the conversation as it stands, its user message hidden. */
  async retryTurn(): Promise<{ accepted: true }> {
    this.requireModel();
    await this.accept(`retry:${randomUUID()}`, { kind: 'retry' });
    return { accepted: true };
  }

  async answerWidget(messageId: string, answer: string | string[]): Promise<{ accepted: true }> {
    const question = this.questions.open(this.id, messageId, 'widget');
    const picked = widgetAnswerOf(question.widget!, answer);
    this.requireModel();
    await this.acceptAnswer(messageId, {
      kind: 'widget-answer',
      messageId,
      text: picked.content,
      value: picked.respondedValue,
    });
    return { accepted: true };
  }

  async submitSecret(messageId: string, value: string): Promise<{ saved: true }> {
    const question = this.questions.open(this.id, messageId, 'secret-request');
    if (value === '') throw new HostError('the secret is empty: paste the value into the field', 400);
    const name = envNameFor(question.target!);
    // The secret first: an accepted answer tells the model the secret is saved.
    await this.secrets.set(name, value);
    this.currentScrubber = scrubberFor(await this.secrets.all());
    // The store may have answered it meanwhile (two submits at once): accepted once.
    this.questions.open(this.id, messageId, 'secret-request');
    await this.acceptAnswer(messageId, { kind: 'secret-answer', messageId, name, label: question.prompt });
    return { saved: true };
  }

  /**
   * Stages an upload (see upload-staging.ts) and records its `user-attachment` entry for the next
   * prompt. Idempotent per client nonce: a repeat gets the first entry back.
   */
  async uploadFile(fileName: string, bytes: Uint8Array, clientNonce?: string): Promise<SequencedEntry> {
    const earlier = () => (clientNonce === undefined ? undefined : this.uploadsByNonce.get(clientNonce));
    const first = earlier();
    if (first !== undefined && this.view.byId(first)) return this.view.byId(first)!;
    const staged = await stageUpload(
      this.attachments,
      this.paths.sandbox,
      fileName,
      bytes,
      this.scrubber(),
      this.config.writePoints,
      this.disk,
      uploadNames(this.view.all()),
    );
    return recordUpload({
      nextId: () => userAttachmentId(this.nextTurn, this.pendingUploads.length),
      append: (id) => {
        const [entry] = this.writer.appendEntries([uploadEntry(id, staged, this.config.now(), clientNonce)]);
        if (clientNonce) this.uploadsByNonce.set(clientNonce, id);
        this.pendingUploads.push({ id, fileName: staged.fileName, sandboxPath: staged.sandboxPath });
        return entry!;
      },
      catchUp: () => {
        if (this.view.catchUp(this.ledger) === 'shrunk') this.view.readAll(this.ledger);
        this.deriveFromLedger();
        return this.view.byId(earlier() ?? '');
      },
    });
  }

  /** Inputs accepted whose turn has not started, oldest first. */
  pendingInputs(): PendingInput[] {
    return this.inbox.pending().map(pendingView);
  }

  /** Ledger entries with seq above `afterSeq`, from memory (shared objects: do not change them). */
  entries(afterSeq = Number.MIN_SAFE_INTEGER): SequencedEntry[] {
    return this.view.after(afterSeq);
  }

  /** `JSON.stringify(this.entries())`, kept between calls (see LedgerView.json). */
  entriesJson(): string {
    return this.view.json();
  }

  /** The ledger entry with this id, from memory. */
  entryById(entryId: string): SequencedEntry | undefined {
    return this.view.byId(entryId);
  }

  /** The roster's preview: the last entry a user sees (LedgerView.lastVisible). */
  lastEntry(): { kind: string; text: string } | null {
    return this.view.lastVisible();
  }

  get awaitingUserResponse(): boolean {
    return this.state.state === 'awaiting-user';
  }

  /** Resolves when every queued turn has finished. */
  async idle(): Promise<void> {
    for (;;) {
      const current = this.queue;
      await current;
      if (current === this.queue) return;
    }
  }

  async close(): Promise<void> {
    await this.idle();
    this.closeStores();
    this.extensions.closed();
  }

  private closeStores(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.stores.close();
  }

  // -------------------------------------------------------------------------
  // turns

  private requireModel(): void {
    if (!this.config.provider) {
      throw new HostError(
        'No model is configured, so this agent cannot answer. See modelStatus().howToConfigure.',
        409,
      );
    }
    if (this.profile.readOnly)
      throw new HostError(`agent ${this.id} is read-only and cannot be prompted`, 403);
  }

  /** Commits an input (a full disk: StoreWriteError, nothing accepted) and lets the queue take it. */
  private async accept(nonce: string, input: InboxInput, options?: AcceptOptions): Promise<boolean> {
    const commit = () => this.inbox.accept(nonce, input, this.config.now(), options);
    // False: another gateway of the cluster accepted this nonce first (the row was there).
    const fresh = await (this.config.acceptsFirst ? this.config.acceptsFirst.accepting(commit) : commit());
    this.emitPending();
    this.schedule();
    return fresh;
  }

  /** An answer is taken at once (a second one meanwhile is 409) and given back if it cannot be saved. */
  private async acceptAnswer(messageId: string, input: InboxInput): Promise<void> {
    this.questions.markAnswered(messageId);
    try {
      await this.accept(answerNonce(messageId), input);
    } catch (error) {
      this.questions.unmarkAnswered(messageId);
      throw error;
    }
  }

  private emitPending(): void {
    this.config.emit({ type: 'inbox', agentId: this.id, pending: this.pendingInputs() });
  }

  /** Runs the inbox's inputs in order, one turn each, unless a run is on already. */
  private schedule(): void {
    if (this.draining || !this.config.provider || this.config.turnsElsewhere) return;
    this.draining = true;
    this.queue = this.queue
      .then(() => {
        this.turnLoopError = null;
        return this.drain();
      })
      .catch((error: unknown) => this.drainFailed(error))
      .finally(() => {
        this.draining = false;
        this.config.emit({ type: 'roster', agentId: this.id, change: 'updated' });
        this.extensions.ready(this);
      });
  }

  private async drain(): Promise<void> {
    const provider = this.config.provider;
    if (!provider) return;
    for (;;) {
      await this.refreshing;
      await this.config.beforeTurn?.(this.view.all());
      if (this.cutTurn !== null) {
        try {
          await this.resumeCutTurn(this.cutTurn, provider);
        } catch (error) {
          if (!(error instanceof StoreWriteError)) throw error;
          this.retryLater();
          return;
        }
        continue;
      }
      if (this.inbox.pending().length === 0) return;
      const accepting = this.config.acceptsFirst?.quiet();
      if (accepting) await accepting;
      const row = this.inbox.pending()[0];
      if (!row) return;
      try {
        const open = this.openTurn();
        if (open !== null) await this.closeTurn(open, await this.readHistory(), BOX_STOPPED_NOTICE);
        // Removed meanwhile (removeQueued): the queue's next input, if any.
        if (this.inbox.pending()[0] !== row) continue;
        await this.runInput(row, provider);
      } catch (error) {
        if (!(error instanceof StoreWriteError)) throw error;
        // The input stays pending (its user message did not commit): try again shortly.
        this.retryLater();
        return;
      }
    }
  }

  /**
   * An error outside every turn (a turn's own closes it with a notice): in a cluster, uploads out of
   * reach before a turn. The inputs stay pending; the box's log says why, and they are tried again.
   */
  private drainFailed(error: unknown): void {
    this.turnLoopError = new Error(
      this.scrubber().text(error instanceof Error ? error.message : String(error)),
    );
    const again = `tried again in ${this.config.inboxRetryMs} ms`;
    this.config.log(`sendbox: agent ${this.id}: its inputs wait, ${again}: ${this.turnLoopError.message}`);
    this.retryLater();
  }

  private retryLater(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.schedule();
    }, this.config.inboxRetryMs);
    this.retryTimer.unref();
  }

  /**
   * One input's turn. Write order (docs/runtime.md, "Invariants"): the user message commits in the
   * ledger first (the input is started), then the JSONL record the model reads. A write failing
   * after that ends the turn at once with a notice and rebuilds the model history from the files.
   */
  private async runInput(row: InboxRow, provider: ModelProvider): Promise<void> {
    const turn = this.nextTurn;
    const entry = userEntryFor(turn, row.nonce, row.input, this.config.now());
    const supersedes = row.input.kind === 'prompt' ? row.input.supersedes : undefined;
    const listed = row.input.kind === 'prompt' ? this.pendingUploads.map((u) => u.sandboxPath) : [];
    const uploads = [...revisedUploads(this.paths.sandbox, this.view.all(), supersedes), ...listed];
    const modelText = modelTextOf(entry as UserEntryFields, uploads, this.questions);
    this.writer.appendEntries([entry]);
    this.nextTurn += 1;
    this.startedTurns.set(row.nonce, turn);
    void this.inbox.markStarted(row.nonce, turn);
    if (row.input.kind === 'prompt') this.pendingUploads = [];
    this.emitPending();
    this.state.startTurn();
    const quiet = row.input.kind === 'routine' && row.input.silent;
    await this.playTurn(turn, provider, quiet, async () => {
      const texts = userRecordTexts(turn, modelText, supersedes);
      this.writer.appendRecords([
        { role: 'user', blocks: texts.map((text) => ({ type: 'text' as const, text })) },
      ]);
      // A prompt in place of an earlier one: the history from the files, which drop the withdrawn turn.
      if (supersedes !== undefined) await this.readHistory();
      else
        this.history.push({ role: 'user', content: texts.map((text) => ({ type: 'text' as const, text })) });
    });
  }

  /**
   * A turn a dead box cut, found on open (turn-resume.ts): its open calls get their results at once,
   * and the turn goes on before the next input (`resumeCutTurn`), its ids after the ledger's. Without
   * a model, cut too often, or on the turn job's last try, it is closed with a notice instead.
   */
  private async foundCutTurn(turn: number, records: JsonObject[]): Promise<void> {
    const point = resumePointOf(turn, records, this.view.all());
    if (
      this.config.provider === null ||
      this.config.closeCutTurns === true ||
      point.resumes >= MAX_TURN_RESUMES
    ) {
      await this.closeTurn(turn, records, BOX_STOPPED_NOTICE);
      return;
    }
    // Its open calls get their results now, before any note is added after them.
    const repair = this.repairOf(turn, records).records;
    this.writer.appendRecords(repair);
    if (repair.length > 0) await this.readHistory();
    this.cutTurn = turn;
  }

  /** Goes on with the cut turn `foundCutTurn` left: the model's note, then the steps it has left. */
  private async resumeCutTurn(turn: number, provider: ModelProvider): Promise<void> {
    const point = resumePointOf(turn, await this.readHistory(), this.view.all());
    if (this.state.state === 'awaiting-user') {
      // A question was delivered before the cut: the turn ended with that step, as it would have.
      this.writer.appendEntries([{ id: `t${turn}e`, kind: 'turn-ended', timestampMs: this.config.now() }]);
      this.cutTurn = null;
      return;
    }
    const note = resumeNoteOf(turn, this.view.all());
    const blocks = note.texts.map((text) => ({ type: 'text' as const, text }));
    this.writer.appendRecords([{ role: 'user', blocks }]);
    this.cutTurn = null;
    this.history.push({ role: 'user', content: blocks });
    for (const nonce of note.taken) {
      this.startedTurns.set(nonce, turn);
      void this.inbox.markStarted(nonce, turn);
    }
    const user = this.view.byId(`t${turn}u`) as { routine?: { silent?: unknown } } | undefined;
    this.state.startTurn();
    await this.playTurn(turn, provider, user?.routine?.silent === true, () => Promise.resolve(), point);
  }

  /** Runs turn `turn`'s steps after `prepare` (its user record); a failure closes it with a notice saying why. */
  private async playTurn(
    turn: number,
    provider: ModelProvider,
    quiet: boolean,
    prepare: () => Promise<void>,
    resumed?: ResumePoint,
  ): Promise<void> {
    try {
      await prepare();
      // Hook (web Stop and streaming bubbles): one abort per turn; drafts go out as events.
      await this.currentProfile(); // its switches (web.fetch) apply from this turn on
      const abort = new AbortController();
      this.turnAbort = abort;
      this.playing = turn;
      const hooks: TurnHooks = { signal: abort.signal, emit: (event) => this.config.emit(event) };
      await runTurn(this.history, turnDriver(this, turn, provider, hooks, resumed), this.state, {
        maxSteps: this.config.maxStepsPerTurn,
        texts: TURN_TEXTS,
        signal: abort.signal,
        budget: this.extensions.turnBudget(turn),
        quiet,
        ...(resumed ? { resumed: { steps: resumed.steps, delivered: resumed.sent } } : {}),
      });
    } catch (error) {
      // A turn never takes the agent down: it is closed with a notice saying why.
      this.state.endTurn();
      const notice =
        error instanceof StoreWriteError
          ? `The box could not save this turn, so it was stopped: ${error.message}.`
          : `The turn failed: ${(error as Error).message}`;
      try {
        await this.closeTurn(turn, await this.readHistory(), notice);
      } catch (closing) {
        if (!(closing instanceof StoreWriteError)) throw closing;
        // No space yet: the turn stays open and is closed before the next one (or on the next start).
      }
    } finally {
      this.turnAbort = null;
      this.playing = null;
    }
  }

  /** Closes turn `turn` (see turn-closer.ts): the JSONL gets what it lacks, the ledger a notice and `turn-ended`. */
  private async closeTurn(turn: number, records: JsonObject[], notice: string): Promise<void> {
    const repair = this.repairOf(turn, records);
    this.writer.appendRecords(repair.records);
    const now = this.config.now();
    const notices = this.view.all().filter((row) => row.id.startsWith(`t${turn}n`)).length;
    this.writer.appendEntries([
      { id: `t${turn}n${notices}`, kind: 'notice', level: 'error', text: notice, timestampMs: now },
      { id: `t${turn}e`, kind: 'turn-ended', timestampMs: now },
    ]);
    if (this.state.state === 'working') this.state.endTurn();
    if (repair.records.length > 0) await this.readHistory();
  }

  /** What turn `turn`'s records lack (see turn-closer.ts): its user record, or its open calls' results. */
  private repairOf(turn: number, records: JsonObject[]): TurnRepair {
    const user = this.view.byId(`t${turn}u`) as (Record<string, unknown> & UserEntryFields) | undefined;
    return repairOf(
      turn,
      records,
      this.view.all(),
      () =>
        userRecordTexts(
          turn,
          modelTextOf(
            user ?? { content: '' },
            [
              ...revisedUploads(this.paths.sandbox, this.view.all(), user?.supersedes),
              ...uploadsBefore(this.paths.sandbox, this.view.all(), user?.seq as number | undefined),
            ],
            this.questions,
          ),
          user?.supersedes,
        ),
      this.extensions.interruptedDetail(turn),
    );
  }

  private onEntries(entries: SequencedEntry[]): void {
    this.unread.count(entries);
    this.view.addOwn(entries);
    for (const entry of entries) this.config.emit({ type: 'entry', agentId: this.id, entry });
  }
}

/**
 * One agent, live: its files, its model conversation, its turn state and the
 * per-turn writes. Turns of one agent run one after another (a queue); turns
 * of different agents run concurrently, each agent with its own writer.
 *
 * Everything the session knows at start comes from its files (the ledger and
 * the JSONL), so a crash mid-turn costs nothing but that turn: the next
 * prompt continues the conversation.
 */
import { statSync, type Stats } from 'node:fs';
import { access, mkdir, open, writeFile } from 'node:fs/promises';
import {
  answerMessage,
  assistantId,
  sendMessageFeature,
  sendSuccessText,
  sendId,
  textOnlyTurnReminder,
  nonSendReminder,
  userAttachmentId,
  userMessageId,
  wrapSystemReminder,
  type LedgerEntry,
  type SecretTarget,
  type Widget,
} from '@sendbox/protocol';
import { grokBot, openLedgerForWrite, type LedgerRow, type LedgerWriter } from '@sendbox/txcript';
import { z } from 'zod';
import { AttachmentStore } from '../attachments/store.ts';
import { ensurePrivateDir } from '../fs/atomic.ts';
import type {
  ModelMessage,
  ModelProvider,
  ModelStepResult,
  ModelToolCall,
  ModelToolSpec,
} from '../providers/types.ts';
import { scrubberFor, type Scrubber } from '../secrets/scrub.ts';
import { SecretStore } from '../secrets/store.ts';
import { isNotFound } from '../sandbox/paths.ts';
import { handleSendMessage, type JsonObject } from '../tools/send-message.ts';
import {
  describeZodError,
  errorOutcome,
  statusOf,
  type HostTool,
  type TodoItem,
  type ToolOutcome,
} from '../tools/types.ts';
import { historyFromRecords, modelOutputFor } from '../transcript/model-view.ts';
import { TranscriptWriter, type JsonlMark, type TranscriptBlock } from '../transcript/writer.ts';
import { agentPaths, type AgentPaths } from './layout.ts';
import { LedgerView } from './ledger-view.ts';
import { userTurnBlocks, userTurnTexts } from './middleware/guidance.ts';
import { SendReminderCounter } from './middleware/send-reminder.ts';
import { readProfile, type Profile } from './profile.ts';
import { StoreLock } from './store-lock.ts';
import { toolCallDetails } from './tool-details.ts';
import { runTurn, type ToolCallReport, type TurnDriver, type TurnTexts } from './turn.ts';
import { TurnStateMachine } from './turn-state.ts';
import { HostError, type HostEvent, type SequencedEntry, type TurnState } from './types.ts';

export interface SessionConfig {
  dataDir: string;
  provider: ModelProvider | null;
  secretKey: Buffer;
  tools: readonly HostTool[];
  sendReminderEvery: number;
  maxStepsPerTurn: number;
  maxAttachmentBytes: number;
  /** Environment every tool process starts from (never the host's own: it holds API keys). */
  toolEnv: Readonly<Record<string, string>>;
  emit(event: HostEvent): void;
  now(): number;
  /** True when this agent is the focused one (its entries do not count as unread). */
  isFocused(id: string): boolean;
}

/** A widget or secret-request the user can answer, from its `send-message` entry. */
export interface Question {
  id: string;
  seq: number;
  kind: 'widget' | 'secret-request';
  prompt: string;
  widget?: Widget;
  target?: SecretTarget;
}

export const TURN_TEXTS: TurnTexts = {
  nonSendReminder: (count) => nonSendReminder(count),
  textOnlyReminder: textOnlyTurnReminder(),
  noReplyNotice: 'The agent stopped without sending you a reply.',
  modelFailedNotice: (message) => `The model call failed, so the agent stopped: ${message}`,
  stepLimitNotice: (steps) => `The agent was stopped after ${steps} model steps in one turn.`,
  stoppedNotice: 'You stopped the turn.',
  stoppedReminder:
    'The user pressed Stop and ended your previous turn before it finished: the model call or tool that was running was interrupted. Do not resume that work unless the user asks.',
  interruptedResult: 'Interrupted: the user stopped the turn before this call finished.',
};

/** What the user reads and the model gets when Retry re-runs a turn after a failed model call. */
export const RETRY_PROMPT = 'The previous model call failed. Try again: continue where you left off.';

const unreadStateSchema = z.object({
  lastActivityAt: z.number().default(0),
  lastViewedAt: z.number().default(0),
  isManuallyUnread: z.boolean().default(false),
  unreadCount: z.number().default(0),
});
export type UnreadState = z.output<typeof unreadStateSchema>;

const VISIBLE_KINDS = new Set<string>(['send-message', 'notice']);

export class AgentSession {
  readonly paths: AgentPaths;
  readonly lock: StoreLock;
  readonly state: TurnStateMachine;
  readonly todos: TodoItem[] = [];
  private readonly feature = sendMessageFeature({ enabled: true });
  private readonly reminder: SendReminderCounter;
  private readonly attachments: AttachmentStore;
  private readonly secrets: SecretStore;
  private scrubber: Scrubber = scrubberFor(new Map());
  private writer!: TranscriptWriter;
  private ledger!: LedgerWriter;
  private history: ModelMessage[] = [];
  private nextTurn = 0;
  private pendingUploads: Array<{ id: string; sandboxPath: string; fileName: string }> = [];
  private readonly nonces = new Set<string>();
  private readonly questions = new Map<string, Question>();
  private readonly answered = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private running = 0;
  /** Aborts the running turn (`cancelTurn`); null between turns. */
  private turnAbort: AbortController | null = null;
  /** The ledger's entries in memory (see LedgerView); the last row of store.db, for the roster. */
  private readonly view = new LedgerView();
  private lastRow: Record<string, unknown> | null = null;
  /** store.db's inode when the ledger was opened: another file in its place means a full reload. */
  private storeIno = 0;
  private profileMark: FileMark | null = null;
  /** A refresh in progress: turns wait for it, so none writes while the files are re-read. */
  private refreshing: Promise<void> = Promise.resolve();
  profile!: Profile;
  unread!: UnreadState;

  private constructor(
    readonly id: string,
    private readonly config: SessionConfig,
  ) {
    this.paths = agentPaths(config.dataDir, id);
    this.lock = new StoreLock(this.paths.storeDb);
    this.reminder = new SendReminderCounter(config.sendReminderEvery);
    this.attachments = new AttachmentStore(this.paths.attachments, config.maxAttachmentBytes);
    this.secrets = new SecretStore(this.paths.secrets, config.secretKey, id);
    this.state = new TurnStateMachine('idle', (state) => config.emit({ type: 'state', agentId: id, state }));
  }

  static async open(id: string, config: SessionConfig): Promise<AgentSession> {
    const session = new AgentSession(id, config);
    await session.load();
    return session;
  }

  /** True while a turn runs or is queued. */
  get busy(): boolean {
    return this.running > 0;
  }

  get turnState(): TurnState {
    return this.state.state;
  }

  /** Reads everything from disk: profile, ledger, JSONL history, secrets. */
  private async load(): Promise<void> {
    const p = this.paths;
    await ensurePrivateDir(p.agentDir);
    await ensurePrivateDir(p.transcriptDir);
    await mkdir(p.sandbox, { recursive: true, mode: 0o700 });
    this.profileMark = fileMark(p.profile);
    this.profile = await readProfile(p.profile);
    this.ledger = this.lockedLedger(openLedgerForWrite(p.storeDb));
    this.storeIno = fileMark(p.storeDb)?.ino ?? 0;
    this.writer = new TranscriptWriter(
      p.jsonl,
      this.ledger,
      () => this.scrubber,
      (entries) => this.onEntries(entries),
    );
    this.scrubber = scrubberFor(await this.secrets.all());
    this.unread = unreadStateSchema.parse(this.ledger.getKv('unreadState') ?? {});
    if (this.ledger.getKv('metadata') === undefined) {
      this.ledger.setKv('metadata', {
        agentId: this.id,
        createdAt: this.profile.createdAt ?? this.config.now(),
      });
    }
    this.readLedger();
    this.deriveFromLedger();
    await this.readHistory();
  }

  /** Every row of store.db into the view: the one full, validated read of a session's ledger. */
  private readLedger(): void {
    const count = this.ledger.countEntries();
    this.view.replace(this.ledger.readLedgerEntries().rows);
    this.view.rowCount = count;
    this.lastRow = lastRowOf(this.ledger.lastEntry());
  }

  /** Turn counter, nonces, questions and answers, and the state, from the ledger entries. */
  private deriveFromLedger(): void {
    this.nonces.clear();
    this.questions.clear();
    this.answered.clear();
    this.pendingUploads = [];
    this.state.restore('idle');
    let lastUserSeq = -1;
    let maxTurn = -1;
    const rows = this.view.all();
    for (const row of rows) {
      const entry = row as Record<string, unknown>;
      const turn = /^t(\d+)u$/.exec(row.id);
      if (turn) maxTurn = Math.max(maxTurn, Number(turn[1]));
      if (entry.kind === 'message' && entry.role === 'user') {
        lastUserSeq = row.seq;
        if (typeof entry.clientNonce === 'string') this.nonces.add(entry.clientNonce);
        if (typeof entry.respondedValue === 'string') this.answered.add(entry.respondedValue);
      }
      if (entry.kind === 'send-message') {
        const question = questionOf(row.id, row.seq, entry.message);
        if (question) this.questions.set(question.id, question);
      }
    }
    this.nextTurn = maxTurn + 1;
    const last = [...this.questions.values()].sort((a, b) => b.seq - a.seq)[0];
    if (last && !this.answered.has(last.id) && last.seq > lastUserSeq) this.state.restore('awaiting-user');
    // Uploads staged for the next turn before a restart.
    const prefix = `t${this.nextTurn}ua`;
    for (const row of rows) {
      const entry = row as Record<string, unknown>;
      if (
        row.id.startsWith(prefix) &&
        entry.kind === 'user-attachment' &&
        typeof entry.file_name === 'string'
      ) {
        this.pendingUploads.push({
          id: row.id,
          fileName: entry.file_name,
          sandboxPath: typeof entry.sandbox_path === 'string' ? entry.sandbox_path : entry.file_name,
        });
      }
    }
  }

  /** The model conversation from the JSONL; the writer learns the size read, to notice another writer later. */
  private async readHistory(): Promise<void> {
    let bytes: Buffer;
    let mark: JsonlMark;
    try {
      // One handle for the size and the bytes, so the mark describes exactly what was read.
      const handle = await open(this.paths.jsonl, 'r');
      try {
        const info = await handle.stat();
        bytes = await handle.readFile();
        mark = { ino: info.ino, size: bytes.length };
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.history = [];
      this.writer.expect({ ino: null, size: 0 });
      return;
    }
    const records = grokBot.text.parse(bytes.toString('utf8'), this.paths.jsonl).records;
    const objects: JsonObject[] = [];
    for (const line of records) if (line.kind === 'record') objects.push(line.json);
    this.history = historyFromRecords(objects);
    this.writer.expect(mark);
  }

  /** Closes and re-reads every file when no turn runs. */
  async reload(): Promise<void> {
    if (this.busy) return;
    await this.whileRefreshing(async () => {
      this.closeFiles();
      await this.load();
    });
  }

  /**
   * Catches up with another writer (txcript's mint seeds an agent, then opens it) when no turn
   * runs. The ledger is append-only, so only rows after the last known seq are read; the JSONL and
   * the profile are read again only when their size or inode changed. When nothing changed this
   * costs a row count and three stats. A store.db replaced or shrunk is reloaded in full.
   */
  async refresh(): Promise<void> {
    if (this.busy) return;
    if (fileMark(this.paths.storeDb)?.ino !== this.storeIno) return this.reload();
    const count = this.ledger.countEntries();
    if (count < this.view.rowCount) return this.reload();
    let ledgerChanged = false;
    if (count > this.view.rowCount) {
      const added = this.ledger.readEntriesAfter(this.view.lastSeq);
      if (this.view.rowCount + added.rows.length + added.warnings.length < count) {
        // Rows landed before the last seq held (another writer interleaved with ours): read all.
        this.readLedger();
      } else {
        this.view.addRows(added.rows);
        this.view.rowCount = Math.max(count, this.view.rowCount);
        this.lastRow = lastRowOf(this.ledger.lastEntry());
      }
      ledgerChanged = true;
      // The writer that added rows may have set the unread state with them (the mint does).
      this.unread = unreadStateSchema.parse(this.ledger.getKv('unreadState') ?? {});
    }
    const jsonlChanged = !sameJsonl(this.writer.expected(), fileMark(this.paths.jsonl));
    const profileMark = fileMark(this.paths.profile);
    const profileChanged = !sameFile(this.profileMark, profileMark);
    if (ledgerChanged) this.deriveFromLedger();
    if (!jsonlChanged && !profileChanged) return;
    await this.whileRefreshing(async () => {
      if (profileChanged) {
        this.profileMark = profileMark;
        this.profile = await readProfile(this.paths.profile);
      }
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

  sendPrompt(prompt: string, clientNonce: string): { accepted: true; duplicate: boolean } {
    if (this.nonces.has(clientNonce)) return { accepted: true, duplicate: true };
    this.requireModel();
    if (prompt.trim() === '') throw new HostError('prompt is empty: type a message first', 400);
    this.nonces.add(clientNonce);
    this.enqueue(async (turn) => {
      const uploads = this.takeUploads();
      const modelText = uploads.length
        ? `${prompt}\n\n${uploads.map((u) => `[The user attached a file: ${u.sandboxPath}]`).join('\n')}`
        : prompt;
      await this.startTurn(turn, modelText, {
        id: userMessageId(turn),
        kind: 'message',
        role: 'user',
        content: prompt,
        clientNonce,
        timestampMs: this.config.now(),
      });
    });
    return { accepted: true, duplicate: false };
  }

  /** Hook (web Stop button): aborts the running turn; queued turns still run after it. */
  cancelTurn(): { cancelled: boolean } {
    const abort = this.turnAbort;
    if (!abort || abort.signal.aborted) return { cancelled: false };
    abort.abort(new Error('the user stopped the turn'));
    return { cancelled: true };
  }

  /**
   * Hook (web Retry button): a new turn on the conversation as it stands, its user message
   * hidden (the bubble that failed stays; the model reads RETRY_PROMPT).
   */
  retryTurn(): { accepted: true } {
    this.requireModel();
    this.enqueue(async (turn) => {
      await this.startTurn(turn, wrapSystemReminder(RETRY_PROMPT), {
        id: userMessageId(turn),
        kind: 'message',
        role: 'user',
        content: RETRY_PROMPT,
        hidden: true,
        timestampMs: this.config.now(),
      });
    });
    return { accepted: true };
  }

  answerWidget(messageId: string, answer: string | string[]): { accepted: true } {
    const question = this.openQuestion(messageId, 'widget');
    const text = widgetAnswerText(question.widget!, answer);
    this.requireModel();
    this.answered.add(messageId);
    this.enqueue(async (turn) => {
      await this.startTurn(turn, answerMessage(messageId, question.prompt, text), {
        id: userMessageId(turn),
        kind: 'message',
        role: 'user',
        content: text,
        respondedValue: messageId,
        timestampMs: this.config.now(),
      });
    });
    return { accepted: true };
  }

  async submitSecret(messageId: string, value: string): Promise<{ saved: true }> {
    const question = this.openQuestion(messageId, 'secret-request');
    if (value === '') throw new HostError('the secret is empty: paste the value into the field', 400);
    const name = envNameFor(question.target!);
    this.answered.add(messageId);
    try {
      await this.secrets.set(name, value);
    } catch (error) {
      this.answered.delete(messageId);
      throw error;
    }
    this.scrubber = scrubberFor(await this.secrets.all());
    const modelText =
      `The user saved the secret. Your tools receive it as the environment variable ${name} ` +
      `(for example "$${name}" in shell). Its value is never shown to you; do not ask for it in chat.`;
    this.enqueue(async (turn) => {
      await this.startTurn(turn, answerMessage(messageId, question.prompt, modelText), {
        id: userMessageId(turn),
        kind: 'message',
        role: 'user',
        content: `Provided ${question.prompt}`,
        respondedValue: messageId,
        timestampMs: this.config.now(),
      });
    });
    return { saved: true };
  }

  /** Stages an upload in the sandbox (`uploads/`), stores it in the attachment store and records the entry. */
  async uploadFile(fileName: string, bytes: Uint8Array, clientNonce?: string): Promise<SequencedEntry> {
    const safeName =
      fileName
        .replace(/[/\\\0]/g, '_')
        .replace(/^\.+/, '_')
        .slice(0, 200) || 'upload';
    let stored;
    try {
      stored = await this.attachments.ingestBytes(bytes, safeName);
    } catch (error) {
      throw new HostError((error as Error).message, 413);
    }
    const uploadsDir = `${this.paths.sandbox}/uploads`;
    await mkdir(uploadsDir, { recursive: true });
    const sandboxPath = `${uploadsDir}/${await freeName(uploadsDir, safeName)}`;
    await writeFile(sandboxPath, bytes, { mode: 0o644 });
    const id = userAttachmentId(this.nextTurn, this.pendingUploads.length);
    const [entry] = this.writer.appendEntries([
      {
        id,
        kind: 'user-attachment',
        timestampMs: this.config.now(),
        file_name: safeName,
        file_path: stored.path,
        byteSize: stored.size,
        media_type: stored.mediaType,
        sha256: stored.sha256,
        sandbox_path: sandboxPath,
        ...(clientNonce ? { clientNonce } : {}),
      },
    ]);
    this.pendingUploads.push({ id, fileName: safeName, sandboxPath });
    return entry!;
  }

  /** Marks everything read (opening the agent). */
  markRead(): void {
    const now = this.config.now();
    this.unread = { ...this.unread, lastViewedAt: now, unreadCount: 0, isManuallyUnread: false };
    this.ledger.setKv('unreadState', this.unread);
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

  lastEntry(): { kind: string; text: string } | null {
    const e = this.lastRow;
    if (!e) return null;
    const text =
      typeof e.content === 'string'
        ? e.content
        : typeof e.text === 'string'
          ? e.text
          : typeof e.file_name === 'string'
            ? e.file_name
            : typeof e.message === 'object' && e.message !== null
              ? summaryOf(e.message as Record<string, unknown>)
              : '';
    return { kind: String(e.kind), text };
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
    this.closeFiles();
  }

  private closeFiles(): void {
    this.lock.release();
    this.writer?.close();
    this.ledger?.close();
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

  private openQuestion(messageId: string, kind: Question['kind']): Question {
    const question = this.questions.get(messageId);
    if (!question || question.kind !== kind) {
      throw new HostError(`agent ${this.id} has no ${kind} message with id ${messageId}`, 404);
    }
    if (this.answered.has(messageId)) {
      throw new HostError(`${kind} ${messageId} was already answered; an answer is accepted once`, 409);
    }
    return question;
  }

  private takeUploads(): Array<{ sandboxPath: string }> {
    const taken = this.pendingUploads;
    this.pendingUploads = [];
    return taken;
  }

  /** Queues a turn; the turn number is assigned when it starts, in queue order. */
  private enqueue(start: (turn: number) => Promise<void>): void {
    this.running += 1;
    this.queue = this.queue
      .then(async () => {
        await this.refreshing;
        const turn = this.nextTurn;
        this.nextTurn += 1;
        await start(turn);
      })
      .catch((error: unknown) => {
        // A turn never takes the agent down: the failure is told to the user as a notice.
        try {
          this.writer.appendEntries([
            {
              id: `t${this.nextTurn - 1}x`,
              kind: 'notice',
              text: `The turn failed: ${(error as Error).message}`,
              timestampMs: this.config.now(),
            },
          ]);
        } catch {
          // The ledger itself is failing; nothing more can be recorded.
        }
        if (this.state.state === 'working') this.state.to('idle');
      })
      .finally(() => {
        this.running -= 1;
        this.config.emit({ type: 'roster', agentId: this.id, change: 'updated' });
      });
  }

  /** Records the user message (JSONL with guidance, ledger entry) and runs the model, if there is one. */
  private async startTurn(turn: number, modelText: string, entry: LedgerEntry): Promise<void> {
    const provider = this.config.provider;
    this.state.startTurn();
    const texts = userTurnTexts(userTurnBlocks(turn, modelText, this.feature.guidance));
    this.writer.appendRecords([
      { role: 'user', blocks: texts.map((text) => ({ type: 'text' as const, text })) },
    ]);
    this.writer.appendEntries([entry]);
    this.history.push({ role: 'user', content: texts.map((text) => ({ type: 'text' as const, text })) });
    if (!provider) {
      this.state.endTurn();
      return;
    }
    const abort = new AbortController();
    this.turnAbort = abort;
    try {
      await runTurn(this.history, this.driverFor(turn, provider, abort.signal), this.state, this.reminder, {
        maxSteps: this.config.maxStepsPerTurn,
        texts: TURN_TEXTS,
        signal: abort.signal,
      });
    } finally {
      this.turnAbort = null;
    }
  }

  private toolSpecs(): ModelToolSpec[] {
    const specs: ModelToolSpec[] = this.feature.tools.map((tool) => {
      const { $schema: _drop, ...schema } = tool.jsonSchema;
      return { name: tool.name, description: tool.description, inputSchema: schema };
    });
    for (const tool of this.config.tools) {
      const { $schema: _drop, ...schema } = z.toJSONSchema(tool.input, {
        target: 'draft-7',
        io: 'input',
      }) as Record<string, unknown>;
      specs.push({ name: tool.name, description: tool.description, inputSchema: schema });
    }
    return specs;
  }

  private systemPrompt(): string {
    return [
      `You are ${this.profile.name}, an agent running in sendbox.${this.profile.description ? ` ${this.profile.description}` : ''}`,
      `Your sandbox folder is ${this.paths.sandbox}. Your tools run there; files you make for the user go there,`,
      'and you send them with send_message type attachment and a file:/// URL of the absolute path.',
    ].join('\n');
  }

  private driverFor(turn: number, provider: ModelProvider, signal: AbortSignal): TurnDriver {
    const counters = { assistant: 0, send: 0, tool: 0, notice: 0 };
    const deliveredInTurn = new Map<string, string>();
    const tools = new Map(this.config.tools.map((tool) => [tool.name, tool]));
    const specs = this.toolSpecs();
    const system = this.systemPrompt();
    const now = () => this.config.now();
    const runCall = async (call: ModelToolCall): Promise<ToolCallReport> => {
      if (call.parseError !== undefined) {
        const message =
          `Your ${call.name} call was not run: its arguments are not valid JSON (${call.parseError}). ` +
          `Call ${call.name} again with a JSON object as arguments.`;
        this.recordCall(call.name, { toolCallId: call.id });
        this.recordResult(call.name, { error: { error: message } });
        return { output: { type: 'error-text', value: message }, delivered: false };
      }
      if (call.name === 'send_message') {
        const outcome = await handleSendMessage(call.input, {
          sandboxDir: this.paths.sandbox,
          attachments: this.attachments,
          sendsBlocked: () => this.state.sendsBlocked,
          nextSendId: () => sendId(turn, counters.send++),
          deliveredInTurn,
          now,
        });
        this.recordCall('send_message', { ...outcome.jsonlInput, toolCallId: call.id });
        this.recordResult('send_message', outcome.result);
        if (!outcome.delivered)
          return { output: { type: 'error-text', value: outcome.reason }, delivered: false };
        const [entry] = this.writer.appendEntries([
          { id: outcome.messageId, kind: 'send-message', message: outcome.stored, timestampMs: now() },
        ]);
        const question = entry ? questionOf(outcome.messageId, entry.seq, outcome.stored) : null;
        if (question) this.questions.set(question.id, question);
        if (outcome.awaitsUser) this.state.awaitUser();
        return { output: { type: 'text', value: sendSuccessText(outcome.messageId) }, delivered: true };
      }
      const tool = tools.get(call.name);
      const rawInput = isObject(call.input) ? (call.input as JsonObject) : {};
      this.recordCall(call.name, { ...rawInput, toolCallId: call.id });
      const startedAt = now();
      let outcome: ToolOutcome;
      if (!tool) {
        const names = ['send_message', ...tools.keys()].join(', ');
        outcome = errorOutcome(
          `There is no tool named ${call.name}. Available tools: ${names}.`,
          `unknown tool ${call.name}`,
        );
      } else {
        const parsed = tool.input.safeParse(call.input);
        outcome = parsed.success
          ? await this.runTool(tool, parsed.data, signal)
          : errorOutcome(describeZodError(tool.name, parsed.error), 'invalid input');
      }
      const envelope = this.scrubber.value(outcome.envelope);
      this.recordResult(call.name, envelope);
      this.writer.appendEntries([
        {
          id: `t${turn}c${counters.tool++}`,
          kind: 'tool-call',
          name: call.name,
          status: statusOf(envelope),
          summary: this.scrubber.text(outcome.summary),
          // Hook (web tool rows): description, scrubbed input/output and duration.
          ...toolCallDetails(rawInput, envelope, now() - startedAt, this.scrubber),
          timestampMs: now(),
        },
      ]);
      return { output: modelOutputFor(call.name, envelope), delivered: false };
    };
    return {
      step: (messages) =>
        provider.step({
          system,
          messages,
          tools: specs,
          abortSignal: signal,
          // Hook (streaming bubbles): send_message text as it is written, over the event stream.
          onSendDraft: ({ toolCallId, text }) =>
            this.config.emit({ type: 'draft', agentId: this.id, toolCallId, text: this.scrubber.text(text) }),
        }),
      recordAssistant: (step: ModelStepResult) => {
        const blocks: TranscriptBlock[] = [];
        if (step.reasoning) blocks.push({ type: 'thinking', thinking: step.reasoning });
        if (step.text) blocks.push({ type: 'text', text: step.text });
        if (blocks.length === 0) return;
        this.writer.appendRecords([{ role: 'assistant', blocks }]);
        if (step.text) {
          this.writer.appendEntries([
            {
              id: assistantId(turn, counters.assistant++),
              kind: 'thinking',
              text: step.text,
              timestampMs: now(),
            },
          ]);
        }
      },
      runToolCall: async (call: ModelToolCall): Promise<ToolCallReport> => {
        try {
          return await runCall(call);
        } finally {
          // The draft of this send is over: its entry (if delivered) was emitted before this.
          if (call.name === 'send_message') {
            this.config.emit({ type: 'draft', agentId: this.id, toolCallId: call.id, text: null });
          }
        }
      },
      recordReminder: (text) => {
        this.writer.appendRecords([{ role: 'user', blocks: [{ type: 'text', text }] }]);
      },
      recordNotice: (text, reason) => {
        this.writer.appendEntries([
          // `reason` (sendbox extension): the web UI shows a model failure as an error with Retry.
          {
            id: `t${turn}n${counters.notice++}`,
            kind: 'notice',
            text,
            ...(reason ? { reason } : {}),
            timestampMs: now(),
          },
        ]);
      },
      recordTurnEnded: () => {
        this.writer.appendEntries([{ id: `t${turn}e`, kind: 'turn-ended', timestampMs: now() }]);
      },
    };
  }

  private async runTool(tool: HostTool, input: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const secrets = await this.secrets.all();
    try {
      return await tool.run(input, {
        sandboxDir: this.paths.sandbox,
        env: { ...this.config.toolEnv, HOME: this.paths.sandbox, ...Object.fromEntries(secrets) },
        scrub: this.scrubber,
        todos: this.todos,
        signal,
        now: () => this.config.now(),
      });
    } catch (error) {
      return errorOutcome(`${tool.name} failed: ${(error as Error).message}`);
    }
  }

  private recordCall(name: string, input: JsonObject): void {
    this.writer.appendRecords([{ role: 'assistant', blocks: [{ type: 'tool_use', name, input }] }]);
  }

  private recordResult(name: string, result: JsonObject): void {
    this.writer.appendRecords([{ role: 'tool', blocks: [{ type: 'tool_result', name, result }] }]);
  }

  // -------------------------------------------------------------------------
  // ledger plumbing

  /** The ledger, with every write done while the store lock is released (see StoreLock). */
  private lockedLedger(inner: LedgerWriter): LedgerWriter {
    const lock = this.lock;
    return Object.assign(Object.create(inner) as LedgerWriter, {
      appendEntries: (entries: readonly LedgerEntry[]) =>
        lock.withReleased(() => inner.appendEntries(entries)),
      appendEntry: (entry: LedgerEntry) => lock.withReleased(() => inner.appendEntry(entry)),
      setKv: (key: string, value: Parameters<LedgerWriter['setKv']>[1]) =>
        lock.withReleased(() => inner.setKv(key, value)),
      close: () => inner.close(),
    });
  }

  private onEntries(entries: SequencedEntry[]): void {
    const visible = entries.filter((entry) => VISIBLE_KINDS.has(entry.kind)).length;
    const now = this.config.now();
    this.unread = {
      ...this.unread,
      lastActivityAt: now,
      unreadCount: this.config.isFocused(this.id) ? 0 : this.unread.unreadCount + visible,
      ...(this.config.isFocused(this.id) ? { lastViewedAt: now } : {}),
    };
    // Persisted once per turn (and on open and upload), not per entry: one commit per send, not two.
    if (entries.some((entry) => entry.kind === 'turn-ended' || entry.kind === 'user-attachment')) {
      this.ledger.setKv('unreadState', this.unread);
    }
    this.view.addOwn(entries);
    const last = entries.at(-1);
    if (last) this.lastRow = last;
    for (const entry of entries) this.config.emit({ type: 'entry', agentId: this.id, entry });
  }
}

/** What tells one version of a file from another without reading it. */
interface FileMark {
  ino: number;
  size: number;
  mtimeMs: number;
}

function fileMark(file: string): FileMark | null {
  let info: Stats | undefined;
  try {
    info = statSync(file, { throwIfNoEntry: false });
  } catch {
    return null;
  }
  return info ? { ino: info.ino, size: info.size, mtimeMs: info.mtimeMs } : null;
}

function sameFile(a: FileMark | null, b: FileMark | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The JSONL is unchanged when it has the size (and inode) the writer expects from its own appends. */
function sameJsonl(expected: JsonlMark | null, actual: FileMark | null): boolean {
  if (expected === null) return false;
  if (actual === null) return expected.size === 0;
  return actual.size === expected.size && (expected.ino === null || actual.ino === expected.ino);
}

/** The last row of store.db if it parses (a row readers skip leaves the roster without a last entry). */
function lastRowOf(row: LedgerRow | undefined): Record<string, unknown> | null {
  return row ? row.entry : null;
}

// ---------------------------------------------------------------------------

function questionOf(id: string, seq: number, message: unknown): Question | null {
  if (!isObject(message)) return null;
  if (message.type === 'widget' && isObject(message.widget)) {
    const widget = message.widget as unknown as Widget;
    return { id, seq, kind: 'widget', prompt: widget.prompt, widget };
  }
  if (message.type === 'secret-request' && isObject(message.secretRequest)) {
    const request = message.secretRequest as { label: string; target: SecretTarget };
    return { id, seq, kind: 'secret-request', prompt: request.label, target: request.target };
  }
  return null;
}

/** The answer as the model reads it: a pick's value (its label when it has none), several picks one per line. */
function widgetAnswerText(widget: Widget, answer: string | string[]): string {
  const picks = (Array.isArray(answer) ? answer : [answer]).map((a) => a.trim()).filter((a) => a !== '');
  if (picks.length === 0) throw new HostError('the answer is empty: pick an option', 400);
  if (picks.length > 1 && !widget.multiSelect) {
    throw new HostError('this question takes one answer; it does not allow several picks', 400);
  }
  const values = new Map(widget.options.map((o) => [o.label, o.value ?? o.label]));
  for (const option of widget.options) values.set(option.value ?? option.label, option.value ?? option.label);
  return picks
    .map((pick) => {
      const value = values.get(pick);
      if (value !== undefined) return value;
      if (widget.allowCustom) return pick;
      throw new HostError(
        `"${pick}" is not one of the options (${widget.options.map((o) => o.label).join(', ')}) and this question takes no custom answer`,
        400,
      );
    })
    .join('\n');
}

/** The environment variable a secret target fills. */
export function envNameFor(target: SecretTarget): string {
  if (target.kind === 'env') return target.name;
  return `${target.platform}_${target.field}`
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .replace(/^(\d)/, '_$1');
}

function summaryOf(message: Record<string, unknown>): string {
  if (typeof message.content === 'string') return message.content;
  if (typeof message.file_name === 'string') return message.file_name;
  if (typeof message.url === 'string') return message.url;
  if (isObject(message.widget) && typeof message.widget.prompt === 'string') return message.widget.prompt;
  if (isObject(message.secretRequest) && typeof message.secretRequest.label === 'string')
    return message.secretRequest.label;
  return typeof message.type === 'string' ? message.type : '';
}

async function freeName(dir: string, name: string): Promise<string> {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${stem} (${i})${ext}`;
    try {
      await access(`${dir}/${candidate}`);
    } catch {
      return candidate;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

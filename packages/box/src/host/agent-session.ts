/**
 * One agent, live: its files, its model conversation, its turn state and the
 * per-turn writes. Turns of one agent run one after another (a queue); turns
 * of different agents run concurrently, each agent with its own writer.
 *
 * Everything the session knows at start comes from its files (the ledger and
 * the JSONL), so a crash mid-turn costs nothing but that turn: the next
 * prompt continues the conversation.
 */
import { mkdir, open } from 'node:fs/promises';
import {
  answerMessage,
  sendMessageFeature,
  textOnlyTurnReminder,
  nonSendReminder,
  userAttachmentId,
  userMessageId,
  wrapSystemReminder,
  type LedgerEntry,
} from '@sendbox/protocol';
import { grokBot, openLedgerForWrite, type LedgerRow, type LedgerWriter } from '@sendbox/txcript';
import { z } from 'zod';
import { AttachmentStore } from '../attachments/store.ts';
import { ensurePrivateDir } from '../fs/atomic.ts';
import type { ModelMessage, ModelProvider } from '../providers/types.ts';
import type { Confinement } from '../sandbox/confinement.ts';
import { scrubberFor, type Scrubber } from '../secrets/scrub.ts';
import { SecretStore } from '../secrets/store.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { JsonObject } from '../tools/send-message.ts';
import type { HostTool, TodoItem } from '../tools/types.ts';
import { historyFromRecords } from '../transcript/model-view.ts';
import { TranscriptWriter, type JsonlMark } from '../transcript/writer.ts';
import { fileMark, sameFile, sameJsonl, type FileMark } from './file-mark.ts';
import { agentPaths, type AgentPaths } from './layout.ts';
import { LedgerView } from './ledger-view.ts';
import { userTurnBlocks, userTurnTexts } from './middleware/guidance.ts';
import { SendReminderCounter } from './middleware/send-reminder.ts';
import { readProfile, type Profile } from './profile.ts';
import { envNameFor, QuestionBook, widgetAnswerText } from './question-book.ts';
import { StoreLock } from './store-lock.ts';
import { runTurn, type TurnTexts } from './turn.ts';
import { turnDriver, type TurnContext } from './turn-driver.ts';
import { TurnStateMachine } from './turn-state.ts';
import { HostError, type HostEvent, type SequencedEntry, type TurnState } from './types.ts';
import { stageUpload } from './upload-staging.ts';

export { envNameFor, type Question } from './question-book.ts';

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
  /** How tool processes are confined; the sandbox folder is prepared for it. */
  confinement: Confinement;
  emit(event: HostEvent): void;
  now(): number;
  /** True when this agent is the focused one (its entries do not count as unread). */
  isFocused(id: string): boolean;
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

/** What the model gets when Retry re-runs a turn after a failed model call (its user message is hidden). */
export const RETRY_PROMPT = 'The previous model call failed. Try again: continue where you left off.';

const unreadStateSchema = z.object({
  lastActivityAt: z.number().default(0),
  lastViewedAt: z.number().default(0),
  isManuallyUnread: z.boolean().default(false),
  unreadCount: z.number().default(0),
});
export type UnreadState = z.output<typeof unreadStateSchema>;

const VISIBLE_KINDS = new Set<string>(['send-message', 'notice']);

export class AgentSession implements TurnContext {
  readonly paths: AgentPaths;
  readonly lock: StoreLock;
  readonly state: TurnStateMachine;
  readonly todos: TodoItem[] = [];
  readonly feature = sendMessageFeature({ enabled: true });
  readonly questions = new QuestionBook();
  readonly attachments: AttachmentStore;
  readonly secrets: SecretStore;
  private readonly reminder: SendReminderCounter;
  private currentScrubber: Scrubber = scrubberFor(new Map());
  writer!: TranscriptWriter;
  private ledger!: LedgerWriter;
  private history: ModelMessage[] = [];
  private nextTurn = 0;
  private pendingUploads: Array<{ id: string; sandboxPath: string; fileName: string }> = [];
  private readonly nonces = new Set<string>();
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

  get tools(): readonly HostTool[] {
    return this.config.tools;
  }

  get toolEnv(): Readonly<Record<string, string>> {
    return this.config.toolEnv;
  }

  /** The profile's network allowlist, read again when profile.json changed (the operator edits it by hand). */
  async allowDomains(): Promise<readonly string[]> {
    const mark = fileMark(this.paths.profile);
    if (!sameFile(this.profileMark, mark)) {
      this.profile = await readProfile(this.paths.profile);
      this.profileMark = mark;
    }
    return this.profile.sandbox?.allowDomains ?? [];
  }

  scrubber(): Scrubber {
    return this.currentScrubber;
  }

  now(): number {
    return this.config.now();
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
    await this.config.confinement.prepare(p.sandbox);
    this.profileMark = fileMark(p.profile);
    this.profile = await readProfile(p.profile);
    this.ledger = this.lock.guard(openLedgerForWrite(p.storeDb));
    this.storeIno = fileMark(p.storeDb)?.ino ?? 0;
    this.writer = new TranscriptWriter(
      p.jsonl,
      this.ledger,
      () => this.currentScrubber,
      (entries) => this.onEntries(entries),
    );
    this.currentScrubber = scrubberFor(await this.secrets.all());
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
        if (typeof entry.respondedValue === 'string') this.questions.markAnswered(entry.respondedValue);
      }
      if (entry.kind === 'send-message') this.questions.noteSend(row.id, row.seq, entry.message);
    }
    this.nextTurn = maxTurn + 1;
    if (this.questions.awaitsAnswerAfter(lastUserSeq)) this.state.restore('awaiting-user');
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

  /** Hook (web Retry button): a new turn on the conversation as it stands, its user message hidden. */
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
    const question = this.questions.open(this.id, messageId, 'widget');
    const text = widgetAnswerText(question.widget!, answer);
    this.requireModel();
    this.questions.markAnswered(messageId);
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
    const question = this.questions.open(this.id, messageId, 'secret-request');
    if (value === '') throw new HostError('the secret is empty: paste the value into the field', 400);
    const name = envNameFor(question.target!);
    this.questions.markAnswered(messageId);
    try {
      await this.secrets.set(name, value);
    } catch (error) {
      this.questions.unmarkAnswered(messageId);
      throw error;
    }
    this.currentScrubber = scrubberFor(await this.secrets.all());
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

  /** Stages an upload (see upload-staging.ts) and records its `user-attachment` entry for the next turn. */
  async uploadFile(fileName: string, bytes: Uint8Array, clientNonce?: string): Promise<SequencedEntry> {
    const staged = await stageUpload(this.attachments, this.paths.sandbox, fileName, bytes, this.scrubber());
    const id = userAttachmentId(this.nextTurn, this.pendingUploads.length);
    const [entry] = this.writer.appendEntries([
      {
        id,
        kind: 'user-attachment',
        timestampMs: this.config.now(),
        file_name: staged.fileName,
        file_path: staged.stored.path,
        byteSize: staged.stored.size,
        media_type: staged.stored.mediaType,
        sha256: staged.stored.sha256,
        sandbox_path: staged.sandboxPath,
        ...(clientNonce ? { clientNonce } : {}),
      },
    ]);
    this.pendingUploads.push({ id, fileName: staged.fileName, sandboxPath: staged.sandboxPath });
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
    // Hook (web Stop and streaming bubbles): one abort per turn; drafts go out as events.
    const abort = new AbortController();
    this.turnAbort = abort;
    const hooks = {
      signal: abort.signal,
      onDraft: (toolCallId: string, text: string | null) =>
        this.config.emit({ type: 'draft', agentId: this.id, toolCallId, text }),
    };
    try {
      await runTurn(this.history, turnDriver(this, turn, provider, hooks), this.state, this.reminder, {
        maxSteps: this.config.maxStepsPerTurn,
        texts: TURN_TEXTS,
        signal: abort.signal,
      });
    } finally {
      this.turnAbort = null;
    }
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

/** The last row of store.db if it parses (a row readers skip leaves the roster without a last entry). */
function lastRowOf(row: LedgerRow | undefined): Record<string, unknown> | null {
  return row ? row.entry : null;
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Approval before a tool runs, for any tool (docs/mcp-client.md, "Approvals"). A gate before every
 * checked call (agent/tool-dispatch.ts): when the rules say `ask` (policy.ts) and the user has not
 * said "always" for it, it commits an approval card to the ledger and the call waits for the answer,
 * its turn `awaiting-user` meanwhile, as a widget leaves it.
 *
 * The card is Grok Bot's `tool-call` kind (grok-bot-format.md §7 has no approval kind; a tool-call
 * row is what a reader shows for a call anyway) with `status: "awaiting-approval"` and an
 * `approval` object: the subject (`web_fetch`, `mcp:github/create_issue`), the server and tool, the
 * arguments (scrubbed) and the choices. The answer is a second entry, `<card id>-answer`, with
 * `status: "approved" | "denied"`: the ledger's unique ids make a card answerable once, across
 * restarts too. "Always allow" is remembered per agent in `agents/<id>/approvals.json` (in a cluster, a sealed row
 * every worker reads: stores/postgres/sealed-documents.ts).
 *
 * Every answer is an input of the durable inbox first (inbox-answer.ts): the waiting call takes it
 * and goes on, and it counts as taken once the call's result is recorded; an answer no turn took
 * (the box stopped, the user sent a prompt while the card waited) starts a turn of its own.
 */
import path from 'node:path';
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonObject, JsonValue } from '@sendbox/txcript';
import { z } from 'zod';
import { HostError } from '../agent/errors.ts';
import type { GatedCall, ToolGate } from '../agent/tool-dispatch.ts';
import type { McpHub } from '../mcp/hub.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { Profile } from '../stores/files/profile.ts';
import type { StoredDocument } from '../stores/documents.ts';
import { JsonFileDocument } from '../stores/files/documents.ts';
import { errorOutcome, type ToolOutcome } from '../tools/types.ts';
import type { InboxInput } from '../stores/inbox.ts';
import { approvalCardId, approvalNonce } from './inbox-answer.ts';
import { approvalSubject, ruleFor, type ApprovalMode } from './policy.ts';

export type ApprovalDecision = 'allow' | 'allow-always' | 'deny';
export const APPROVAL_CHOICES: readonly ApprovalDecision[] = ['allow', 'allow-always', 'deny'];

/** What answering needs of an agent: its ledger, and its durable inbox (the session's). */
export interface ApprovalLedger {
  entries(): Promise<ReadonlyArray<{ id: string; kind: string; [key: string]: unknown }>>;
  append(entry: LedgerEntry): void;
  /** Accepts an input once per nonce (false: accepted before), durable when it resolves. */
  deliver(nonce: string, input: InboxInput): Promise<boolean>;
  /** Marks a delivered input taken by running turn `turn` (no turn of its own will answer it). */
  take(nonce: string, turn: number): Promise<void>;
}

/**
 * Where the gate reads an agent's rules and keeps its grants: the data dir (`agents/<id>/profile.json`
 * and `agents/<id>/approvals.json`), or a cluster's rows, which every worker shares.
 */
export interface ApprovalStores {
  profileOf(agentId: string): Promise<Profile>;
  /** The agent's grants document (the `approvals.json` shape below). */
  grants(agentId: string): StoredDocument;
  /** Where the calls that wait on cards are known to every worker of a cluster; none in a single box. */
  waits?: SharedApprovalWaits;
}

/**
 * A cluster's record of the cards its workers' calls wait on (cluster/approval-waits.ts). An answer
 * is committed by whichever gateway the user used; the worker running the card's call hears its
 * answer entry (cluster/events.ts relays it) and takes it there (`ToolApprovals.answeredElsewhere`).
 */
export interface SharedApprovalWaits {
  /** Card `cardId` is about to be committed and waited on by a call here (before the card is visible). */
  waiting(agentId: string, cardId: string): Promise<void>;
  /** The wait here ended: `taken`, the call took an answer; otherwise the card is waited on no more. */
  ended(agentId: string, cardId: string, taken: boolean): Promise<void>;
  /**
   * An answer committed here found no call waiting on the card here: true once a call on another
   * worker took it, false when none waits on it (or its worker died meanwhile).
   */
  takenElsewhere(agentId: string, cardId: string): Promise<boolean>;
  /** A prompt was accepted here while the agent awaits the user elsewhere: a call waiting on a card there yields. */
  yieldElsewhere(agentId: string): void;
  /** The cards calls on live workers wait on now (read by a gateway at its start, before it hears any). */
  openWaits(): Promise<{ agentId: string; cardId: string }[]>;
}

/** The grants document of an agent in the data dir: `agents/<id>/approvals.json`. */
export function approvalsFile(dataDir: string, agentId: string): StoredDocument {
  return new JsonFileDocument(path.join(agentPaths(dataDir, agentId).agentDir, 'approvals.json'));
}

/**
 * `agents/<id>/approvals.json`: the subjects the user always allows, and those allowed once after
 * a restart (the model's next such call runs without a card, and uses the grant up).
 */
const rememberedSchema = z.object({
  alwaysAllow: z.array(z.string()).default([]),
  allowOnce: z.array(z.string()).default([]),
});
type Remembered = z.output<typeof rememberedSchema>;

/**
 * How a wait ended without an answer: the user stopped the turn, the box is closing, or the user
 * sent a prompt instead (the card stays open; its answer comes later through the inbox).
 */
type WaitEnd = 'stopped' | 'closing' | 'yielded';

/** An answer a waiting call takes: the decision, and how its inbox input is marked taken. */
interface LiveAnswer {
  decision: ApprovalDecision;
  taken: () => Promise<void>;
}

interface Waiter {
  turn: number;
  subject: string;
  settle(end: LiveAnswer | WaitEnd): void;
}

export class ToolApprovals implements ToolGate {
  readonly name = 'approval';
  /** Cards waiting in a running turn, by `<agent>/<card>`. */
  private readonly waiting = new Map<string, Waiter>();
  /** Answers taken by resumed calls, by `<agent>/<tool call>`: marked taken once the result is recorded. */
  private readonly taking = new Map<string, () => Promise<void>>();
  /** The turn of each agent a prompt ended a wait in: its later cards wait no more (the turn ends). */
  private readonly yielded = new Map<string, number>();
  /** Agents whose turn on another worker awaits the user, as its relayed state says (a prompt may yield there). */
  private readonly awaitingElsewhere = new Set<string>();
  /** The open cards of each agent, as its relayed entries say (heard since this worker started). */
  private readonly cardsElsewhere = new Map<string, Set<string>>();
  /** Cards whose answer is being committed through this host: their relayed answer entry is not taken again. */
  private readonly answering = new Set<string>();
  /** Set when the box closes: a wait ended then leaves its card open for after the restart. */
  private closing = false;

  /** `onWaits` hears when an agent starts or stops waiting on a card (the roster shows it). */
  constructor(
    private readonly stored: ApprovalStores,
    private readonly mcp: McpHub,
    private readonly onWaits: (agentId: string) => void = () => undefined,
  ) {}

  /** Whether a running turn of the agent waits on a card now. */
  waitsOn(agentId: string): boolean {
    const prefix = `${agentId}/`;
    for (const key of this.waiting.keys()) if (key.startsWith(prefix)) return true;
    // A turn on another worker (a cluster): it awaits the user with a card open, as relayed here.
    return this.awaitingElsewhere.has(agentId) && (this.cardsElsewhere.get(agentId)?.size ?? 0) > 0;
  }

  /**
   * The user sent a prompt while the agent's turn waits on a card (the page offers Send then, as
   * for a widget): the wait ends with the card left open, the call is not run, and the turn ends,
   * so the prompt's turn runs next. The card can still be answered; its answer starts a turn.
   */
  yieldTo(agentId: string): void {
    if (this.yieldHere(agentId) || !this.awaitingElsewhere.has(agentId)) return;
    // The turn runs on another worker (a cluster): its waiting call yields there.
    this.stored.waits?.yieldElsewhere(agentId);
  }

  /**
   * Learns the cards that calls on other workers wait on now (a cluster gateway starting): what it
   * would have heard, had it been up when they opened. Their turns await the user.
   */
  async heardOpenWaits(): Promise<void> {
    for (const { agentId, cardId } of (await this.stored.waits?.openWaits()) ?? []) {
      this.awaitingElsewhere.add(agentId);
      this.cardsElsewhere.set(agentId, (this.cardsElsewhere.get(agentId) ?? new Set<string>()).add(cardId));
    }
  }

  /** An agent's turn state, relayed from the worker running it (a cluster). */
  heardState(agentId: string, state: string): void {
    if (state === 'awaiting-user') this.awaitingElsewhere.add(agentId);
    else this.awaitingElsewhere.delete(agentId);
  }

  /** Ends the waits of the agent's calls here, their cards left open; false when none waited here. */
  yieldHere(agentId: string): boolean {
    const prefix = `${agentId}/`;
    let found = false;
    for (const [key, waiter] of [...this.waiting]) {
      if (!key.startsWith(prefix)) continue;
      found = true;
      this.yielded.set(agentId, waiter.turn);
      waiter.settle('yielded');
    }
    return found;
  }

  async beforeRun(call: GatedCall): Promise<ToolOutcome | null> {
    const subject = approvalSubject(call.tool.name, call.input);
    if ((await this.modeOf(call, subject)) === 'auto') return null;
    if (await this.granted(call.agentId, subject)) return null;
    if (!call.appendEntry) {
      return errorOutcome(
        `${subject} needs the user's approval before it runs, and no user can be asked here. ` +
          'Tell your caller what you wanted to run.',
        'needs approval',
      );
    }
    const id = approvalCardId(call.toolCallId);
    const { server, toolName, args } = describe(call);
    // Known to the cluster before the card is visible: every answer to it finds this worker.
    await this.stored.waits?.waiting(call.agentId, id);
    call.appendEntry({
      id,
      kind: 'tool-call',
      name: call.tool.name,
      status: 'awaiting-approval',
      summary: `Allow ${subject}?`,
      toolCallId: call.toolCallId,
      approval: {
        subject,
        ...(server ? { server } : {}),
        toolName,
        args: call.scrub.value(args),
        choices: [...APPROVAL_CHOICES],
      },
      timestampMs: Date.now(),
    });
    const end = this.yielded.get(call.agentId) === call.turn ? 'yielded' : await this.wait(call, id, subject);
    await this.stored.waits?.ended(call.agentId, id, typeof end === 'object').catch(() => undefined);
    if (typeof end === 'object') {
      this.taking.set(`${call.agentId}/${call.toolCallId}`, end.taken);
      if (end.decision !== 'deny') return null;
      return errorOutcome(
        `The user declined this ${subject} call, so it was not run. Do not try it again unless the user asks; ` +
          'go on without it or ask the user what they want instead.',
        'declined by the user',
      );
    }
    if (end === 'yielded') {
      // No answer is written: the card stays open, and its answer reaches the model through the inbox.
      return errorOutcome(
        `${subject} was not run: the user sent a new message before answering the approval card, so this ` +
          'turn ends here. The card stays open; if the user answers it, you will be told.',
        'not answered before the user wrote',
      );
    }
    if (end === 'closing') {
      // No answer is written: the card stays open, and its answer after the restart reaches the
      // model through the inbox.
      return errorOutcome(
        `${subject} was not run: the box stopped while it waited for the user's approval. ` +
          'The user can still answer; you will be told.',
        'box stopped while waiting for approval',
      );
    }
    // Stopped: the card is closed, it reads "stopped", and a late answer is refused.
    call.appendEntry({
      id: `${id}-answer`,
      kind: 'tool-call',
      name: call.tool.name,
      status: 'stopped',
      summary: `Stopped before ${subject} was answered`,
      toolCallId: call.toolCallId,
      approval: { answers: id, decision: 'stopped' },
      timestampMs: Date.now(),
    });
    return errorOutcome(
      `${subject} was not run: the turn was stopped while it waited for the user's approval.`,
      'stopped while waiting for approval',
    );
  }

  /** The resumed call's result is recorded: its answer is taken (a restart does not answer it again). */
  async afterRecorded(call: GatedCall): Promise<void> {
    const key = `${call.agentId}/${call.toolCallId}`;
    const taken = this.taking.get(key);
    if (!taken) return;
    this.taking.delete(key);
    await taken();
  }

  private async modeOf(call: GatedCall, subject: string): Promise<ApprovalMode> {
    const profile = await this.stored.profileOf(call.agentId).catch(() => null);
    const rule = ruleFor(profile?.approvals, subject);
    if (rule) return rule;
    const { server, toolName } = describe(call);
    if (!server) return 'auto';
    return this.mcp
      .access(call.agentId)
      .approval(server, toolName)
      .catch(() => 'auto' as const);
  }

  /**
   * The box is closing: the agents whose turns wait on a card, for the host to stop them. Their
   * cards stay open (no answer is written) and can be answered after the restart.
   */
  closeWaits(): string[] {
    this.closing = true;
    return [...new Set([...this.waiting.keys()].map((key) => key.split('/')[0]!))];
  }

  /** Waits for the answer to card `id`, the turn `awaiting-user` meanwhile (back to working unless it yielded). */
  private async wait(call: GatedCall, id: string, subject: string): Promise<LiveAnswer | WaitEnd> {
    const state = call.turnState?.state === 'working' ? call.turnState : undefined;
    state?.awaitUser();
    const ended = this.waitFor(call, `${call.agentId}/${id}`, subject);
    this.onWaits(call.agentId);
    const end = await ended;
    if (state?.state === 'awaiting-user' && end !== 'yielded') state.startTurn();
    this.onWaits(call.agentId);
    return end;
  }

  private waitFor(call: GatedCall, key: string, subject: string): Promise<LiveAnswer | WaitEnd> {
    const { signal } = call;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(this.closing ? 'closing' : 'stopped');
      const settle = (end: LiveAnswer | WaitEnd) => {
        if (this.waiting.get(key) !== waiter) return;
        signal.removeEventListener('abort', onAbort);
        this.waiting.delete(key);
        resolve(end);
      };
      const onAbort = () => settle(this.closing ? 'closing' : 'stopped');
      const waiter: Waiter = { turn: call.turn, subject, settle };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(key, waiter);
    });
  }

  /**
   * `answerToolApproval`: accepted once per card (404 for no such card, 409 when it was answered or
   * stopped). The answer is committed in the durable inbox first (its nonce is the card's), then
   * the card's answer entry; a call waiting on the card takes it and goes on at once. An answer no
   * turn takes (the box restarted meanwhile, the user wrote first) starts a turn that tells the
   * model what the user decided, and "allow" lets its next such call run once.
   */
  async answer(
    agentId: string,
    ledger: ApprovalLedger,
    entryId: string,
    decision: ApprovalDecision,
  ): Promise<{ accepted: true; resumed: boolean }> {
    const entries = await ledger.entries();
    const card = entries.find(
      (e) => e.id === entryId && e.kind === 'tool-call' && e.status === 'awaiting-approval',
    );
    if (!card) throw new HostError(`agent ${agentId} has no approval card with id ${entryId}`, 404);
    const answered = entries.find((e) => e.id === `${entryId}-answer`);
    if (answered) throw alreadyAnswered(entryId, answered.status === 'stopped');
    const approval = card.approval as JsonObject | undefined;
    const subject = typeof approval?.subject === 'string' ? approval.subject : String(card.name);
    const nonce = approvalNonce(entryId);
    const key = `${agentId}/${entryId}`;
    // The grant is written before the input, which a turn of its own may answer after a restart.
    const grant = await this.grant(agentId, subject, decision);
    const input = { kind: 'tool-approval', entryId, subject, decision } as const;
    if (!(await ledger.deliver(nonce, input))) {
      await grant.undo();
      throw alreadyAnswered(entryId, false);
    }
    this.answering.add(key);
    try {
      ledger.append({
        id: `${entryId}-answer`,
        kind: 'tool-call',
        name: String(card.name),
        status: decision === 'deny' ? 'denied' : 'approved',
        summary: `${decision === 'deny' ? 'Denied' : 'Allowed'} ${subject}${decision === 'allow-always' ? ' (always)' : ''}`,
        toolCallId: card.toolCallId as JsonValue,
        approval: { answers: entryId, decision },
        timestampMs: Date.now(),
      });
    } catch (error) {
      this.answering.delete(key);
      // Two answers at once: the ledger's unique id let one in.
      if (/UNIQUE/i.test((error as Error).message)) throw alreadyAnswered(entryId, false);
      throw error;
    }
    const waiter = this.waiting.get(key);
    this.answering.delete(key);
    if (waiter) {
      waiter.settle({ decision, taken: this.takenBy(agentId, entryId, waiter, decision, ledger) });
      return { accepted: true, resumed: true };
    }
    // In a cluster the call may wait on another worker, which hears the answer entry.
    const resumed = (await this.stored.waits?.takenElsewhere(agentId, entryId)) ?? false;
    return { accepted: true, resumed };
  }

  /**
   * An entry relayed from another worker (a cluster): a card opened there counts for `waitsOn`
   * while the agent awaits the user; an answer entry committed elsewhere is taken by the call
   * waiting here on its card, which goes on. False when no call here waits on that card.
   */
  answeredElsewhere(agentId: string, entry: object, ledger: Pick<ApprovalLedger, 'take'>): boolean {
    const { id, kind, status, approval } = entry as {
      id?: unknown;
      kind?: unknown;
      status?: unknown;
      approval?: { answers?: unknown; decision?: unknown };
    };
    if (kind === 'tool-call' && status === 'awaiting-approval' && typeof id === 'string') {
      const cards = this.cardsElsewhere.get(agentId) ?? new Set<string>();
      this.cardsElsewhere.set(agentId, cards.add(id));
    }
    if (kind !== 'tool-call' || typeof approval?.answers !== 'string') return false;
    this.cardsElsewhere.get(agentId)?.delete(approval.answers);
    const decision = APPROVAL_CHOICES.find((choice) => choice === approval.decision);
    const key = `${agentId}/${approval.answers}`;
    const waiter = this.waiting.get(key);
    if (!decision || !waiter || this.answering.has(key)) return false;
    waiter.settle({ decision, taken: this.takenBy(agentId, approval.answers, waiter, decision, ledger) });
    return true;
  }

  /**
   * How an answer a waiting call took is marked taken, once the call's result is recorded: the
   * one-time grant, there for a turn of the answer's own should the box stop before that, is used
   * up then, and the answer's inbox input is started by the call's turn.
   */
  private takenBy(
    agentId: string,
    cardId: string,
    waiter: Waiter,
    decision: ApprovalDecision,
    ledger: Pick<ApprovalLedger, 'take'>,
  ): () => Promise<void> {
    return async () => {
      if (decision === 'allow') await this.useOnce(agentId, waiter.subject);
      await ledger.take(approvalNonce(cardId), waiter.turn);
    };
  }

  private async remembered(agentId: string): Promise<Remembered> {
    try {
      return rememberedSchema.parse(await this.stored.grants(agentId).read());
    } catch {
      // Missing, or damaged: a damaged document allows nothing by itself, every call asks again.
      return { alwaysAllow: [], allowOnce: [] };
    }
  }

  /** Remembers what an answer after a restart allows (nothing for a deny), and how to take it back. */
  private async grant(
    agentId: string,
    subject: string,
    decision: ApprovalDecision,
  ): Promise<{ undo(): Promise<void> }> {
    if (decision === 'deny') return { undo: async () => {} };
    const list = (now: Remembered) => (decision === 'allow' ? now.allowOnce : now.alwaysAllow);
    const had = list(await this.remembered(agentId)).includes(subject);
    if (decision === 'allow') await this.remember(agentId, (now) => now.allowOnce.push(subject));
    else await this.remember(agentId, (now) => addOnce(now.alwaysAllow, subject));
    return {
      undo: () =>
        this.remember(agentId, (now) => {
          const at = list(now).indexOf(subject);
          if (at >= 0 && (decision === 'allow' || !had)) list(now).splice(at, 1);
        }),
    };
  }

  /** Always allowed, or allowed once (the grant is used up, once across every worker). */
  private async granted(agentId: string, subject: string): Promise<boolean> {
    const now = await this.remembered(agentId);
    if (now.alwaysAllow.includes(subject)) return true;
    if (!now.allowOnce.includes(subject)) return false;
    return this.useOnce(agentId, subject);
  }

  /** Uses up one "allowed once" grant of the subject; false when there was none left. */
  private useOnce(agentId: string, subject: string): Promise<boolean> {
    return this.remember(agentId, (now) => {
      const at = now.allowOnce.indexOf(subject);
      if (at >= 0) now.allowOnce.splice(at, 1);
      return at >= 0;
    });
  }

  private remember<T>(agentId: string, change: (now: Remembered) => T): Promise<T> {
    return this.stored.grants(agentId).update((current) => {
      const parsed = rememberedSchema.safeParse(current);
      const now = parsed.success ? parsed.data : { alwaysAllow: [], allowOnce: [] };
      return { result: change(now), value: now };
    });
  }
}

function addOnce(list: string[], item: string): void {
  if (!list.includes(item)) list.push(item);
}

function alreadyAnswered(entryId: string, stopped: boolean): HostError {
  return new HostError(
    stopped
      ? `approval ${entryId} was stopped with its turn before it was answered; ask the agent again`
      : `approval ${entryId} was already answered; an answer is accepted once`,
    409,
  );
}

function describe(call: GatedCall): { server?: string; toolName: string; args: JsonValue } {
  const input = (call.input ?? {}) as { server?: unknown; toolName?: unknown; args?: unknown };
  if (call.tool.name === 'mcp' && typeof input.server === 'string' && typeof input.toolName === 'string') {
    return { server: input.server, toolName: input.toolName, args: (input.args ?? {}) as JsonValue };
  }
  return { toolName: call.tool.name, args: (call.input ?? {}) as JsonValue };
}

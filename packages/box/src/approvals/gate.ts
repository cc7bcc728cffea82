/**
 * Approval before a tool runs, for any tool (docs/mcp-client.md, "Approvals"). A gate before every
 * checked call (agent/tool-dispatch.ts): when the rules say `ask` (policy.ts) and the user has not
 * said "always" for it, it commits an approval card to the ledger and the call waits for the answer.
 *
 * The card is Grok Bot's `tool-call` kind (grok-bot-format.md §7 has no approval kind; a tool-call
 * row is what a reader shows for a call anyway) with `status: "awaiting-approval"` and an
 * `approval` object: the subject (`web_fetch`, `mcp:github/create_issue`), the server and tool, the
 * arguments (scrubbed) and the choices. The answer is a second entry, `<card id>-answer`, with
 * `status: "approved" | "denied"`: the ledger's unique ids make a card answerable once, across
 * restarts too. "Always allow" is remembered per agent in `agents/<id>/approvals.json`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonObject, JsonValue } from '@sendbox/txcript';
import { z } from 'zod';
import { HostError } from '../agent/errors.ts';
import type { GatedCall, ToolGate } from '../agent/tool-dispatch.ts';
import { writeFileAtomic } from '../fs/atomic.ts';
import type { McpHub } from '../mcp/hub.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { readProfile } from '../stores/files/profile.ts';
import { errorOutcome, type ToolOutcome } from '../tools/types.ts';
import type { InboxInput } from '../stores/inbox.ts';
import { approvalSubject, ruleFor, type ApprovalMode } from './policy.ts';

export type ApprovalDecision = 'allow' | 'allow-always' | 'deny';
export const APPROVAL_CHOICES: readonly ApprovalDecision[] = ['allow', 'allow-always', 'deny'];

/** What answering needs of an agent: its ledger, and its durable inbox (the session's). */
export interface ApprovalLedger {
  entries(): Promise<ReadonlyArray<{ id: string; kind: string; [key: string]: unknown }>>;
  append(entry: LedgerEntry): void;
  /** Accepts an input once per nonce (false: accepted before), durable when it resolves. */
  deliver(nonce: string, input: InboxInput): Promise<boolean>;
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

/** How a wait ended without an answer: the user stopped the turn, or the box is closing. */
type WaitEnd = 'stopped' | 'closing';

export class ToolApprovals implements ToolGate {
  readonly name = 'approval';
  /** Cards waiting in a running turn, by `<agent>/<card>`. */
  private readonly waiting = new Map<string, (decision: ApprovalDecision) => void>();
  /** Set when the box closes: a wait ended then leaves its card open for after the restart. */
  private closing = false;

  /** `onWaits` hears when an agent starts or stops waiting on a card (the roster shows it). */
  constructor(
    private readonly dataDir: string,
    private readonly mcp: McpHub,
    private readonly onWaits: (agentId: string) => void = () => undefined,
  ) {}

  /** Whether a running turn of the agent waits on a card now. */
  waitsOn(agentId: string): boolean {
    const prefix = `${agentId}/`;
    for (const key of this.waiting.keys()) if (key.startsWith(prefix)) return true;
    return false;
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
    const id = `approval-${call.toolCallId}`;
    const { server, toolName, args } = describe(call);
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
    const decision = await this.wait(`${call.agentId}/${id}`, call.signal);
    if (decision === 'closing') {
      // No answer is written: the card stays open, and its answer after the restart reaches the
      // model through the inbox.
      return errorOutcome(
        `${subject} was not run: the box stopped while it waited for the user's approval. ` +
          'The user can still answer; you will be told.',
        'box stopped while waiting for approval',
      );
    }
    if (decision === 'stopped') {
      // The card is closed: it reads "stopped", and a late answer is refused.
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
    if (decision === 'deny') {
      return errorOutcome(
        `The user declined this ${subject} call, so it was not run. Do not try it again unless the user asks; ` +
          'go on without it or ask the user what they want instead.',
        'declined by the user',
      );
    }
    return null;
  }

  private async modeOf(call: GatedCall, subject: string): Promise<ApprovalMode> {
    const profile = await readProfile(agentPaths(this.dataDir, call.agentId).profile).catch(() => null);
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

  private async wait(key: string, signal: AbortSignal): Promise<ApprovalDecision | WaitEnd> {
    const agentId = key.slice(0, key.indexOf('/'));
    const decision = this.waitFor(key, signal);
    this.onWaits(agentId);
    try {
      return await decision;
    } finally {
      this.onWaits(agentId);
    }
  }

  private waitFor(key: string, signal: AbortSignal): Promise<ApprovalDecision | WaitEnd> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(this.closing ? 'closing' : 'stopped');
      const onAbort = () => {
        this.waiting.delete(key);
        resolve(this.closing ? 'closing' : 'stopped');
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(key, (decision) => {
        signal.removeEventListener('abort', onAbort);
        this.waiting.delete(key);
        resolve(decision);
      });
    });
  }

  /**
   * `answerToolApproval`: accepted once per card (404 for no such card, 409 when it was answered or
   * stopped). A card its turn waits on lets the call go on at once; a card whose turn is gone (the
   * box restarted meanwhile) is answered through the durable inbox, whose nonce is the card's: a
   * turn tells the model what the user decided, and "allow" lets its next such call run once.
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
    const waiting = this.waiting.get(`${agentId}/${entryId}`);
    if (!waiting) {
      // The grant is written before the input that starts the turn which may use it.
      const grant = await this.grant(agentId, subject, decision);
      const input = { kind: 'tool-approval', entryId, subject, decision } as const;
      if (!(await ledger.deliver(`approval:${entryId}`, input))) {
        await grant.undo();
        throw alreadyAnswered(entryId, false);
      }
    } else if (decision === 'allow-always') {
      await this.remember(agentId, (now) => addOnce(now.alwaysAllow, subject));
    }
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
      // Two answers at once: the ledger's unique id let one in.
      if (/UNIQUE/i.test((error as Error).message)) throw alreadyAnswered(entryId, false);
      throw error;
    }
    if (decision === 'allow-always') await this.remember(agentId, (now) => addOnce(now.alwaysAllow, subject));
    else if (decision === 'allow' && !waiting)
      await this.remember(agentId, (now) => now.allowOnce.push(subject));
    waiting?.(decision);
    return { accepted: true, resumed: waiting !== undefined };
  }

  private file(agentId: string): string {
    return path.join(agentPaths(this.dataDir, agentId).agentDir, 'approvals.json');
  }

  private async remembered(agentId: string): Promise<Remembered> {
    try {
      return rememberedSchema.parse(JSON.parse(await readFile(this.file(agentId), 'utf8')));
    } catch {
      // Missing, or damaged: a damaged file allows nothing by itself, every call asks again.
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

  /** Always allowed, or allowed once (the grant is used up). */
  private async granted(agentId: string, subject: string): Promise<boolean> {
    const now = await this.remembered(agentId);
    if (now.alwaysAllow.includes(subject)) return true;
    if (!now.allowOnce.includes(subject)) return false;
    await this.remember(agentId, (next) => next.allowOnce.splice(next.allowOnce.indexOf(subject), 1));
    return true;
  }

  private async remember(agentId: string, change: (now: Remembered) => void): Promise<void> {
    const now = await this.remembered(agentId);
    change(now);
    await writeFileAtomic(this.file(agentId), `${JSON.stringify(now, null, 2)}\n`, { mode: 0o600 });
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

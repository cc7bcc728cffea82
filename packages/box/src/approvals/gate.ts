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
import { isNotFound } from '../sandbox/paths.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { readProfile } from '../stores/files/profile.ts';
import { errorOutcome, type ToolOutcome } from '../tools/types.ts';
import { approvalSubject, ruleFor, type ApprovalMode } from './policy.ts';

export type ApprovalDecision = 'allow' | 'allow-always' | 'deny';
export const APPROVAL_CHOICES: readonly ApprovalDecision[] = ['allow', 'allow-always', 'deny'];

/** What answering needs of an agent's ledger (the session's). */
export interface ApprovalLedger {
  entries(): Promise<ReadonlyArray<{ id: string; kind: string; [key: string]: unknown }>>;
  append(entry: LedgerEntry): void;
}

const rememberedSchema = z.object({ alwaysAllow: z.array(z.string()).default([]) });

export class ToolApprovals implements ToolGate {
  readonly name = 'approval';
  /** Cards waiting in a running turn, by `<agent>/<card>`. */
  private readonly waiting = new Map<string, (decision: ApprovalDecision) => void>();

  constructor(
    private readonly dataDir: string,
    private readonly mcp: McpHub,
  ) {}

  async beforeRun(call: GatedCall): Promise<ToolOutcome | null> {
    const subject = approvalSubject(call.tool.name, call.input);
    if ((await this.modeOf(call, subject)) === 'auto') return null;
    if ((await this.remembered(call.agentId)).includes(subject)) return null;
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
    if (decision === 'stopped') {
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

  private wait(key: string, signal: AbortSignal): Promise<ApprovalDecision | 'stopped'> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve('stopped');
      const onAbort = () => {
        this.waiting.delete(key);
        resolve('stopped');
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
   * `answerToolApproval`: commits the answer (once per card: 404 for no such card, 409 when it was
   * answered), remembers "always", and lets a waiting call go on. A card whose turn is gone (the box
   * restarted) is answered all the same; its call was closed as interrupted.
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
    if (entries.some((e) => e.id === `${entryId}-answer`)) {
      throw new HostError(`approval ${entryId} was already answered; an answer is accepted once`, 409);
    }
    const approval = card.approval as JsonObject | undefined;
    const subject = typeof approval?.subject === 'string' ? approval.subject : String(card.name);
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
      if (/UNIQUE/i.test((error as Error).message)) {
        throw new HostError(`approval ${entryId} was already answered; an answer is accepted once`, 409);
      }
      throw error;
    }
    if (decision === 'allow-always') await this.remember(agentId, subject);
    const waiting = this.waiting.get(`${agentId}/${entryId}`);
    waiting?.(decision);
    return { accepted: true, resumed: waiting !== undefined };
  }

  private file(agentId: string): string {
    return path.join(agentPaths(this.dataDir, agentId).agentDir, 'approvals.json');
  }

  private async remembered(agentId: string): Promise<string[]> {
    try {
      return rememberedSchema.parse(JSON.parse(await readFile(this.file(agentId), 'utf8'))).alwaysAllow;
    } catch (error) {
      if (isNotFound(error)) return [];
      // A damaged file allows nothing by itself: every call asks again.
      return [];
    }
  }

  private async remember(agentId: string, subject: string): Promise<void> {
    const now = await this.remembered(agentId);
    if (now.includes(subject)) return;
    await writeFileAtomic(
      this.file(agentId),
      `${JSON.stringify({ alwaysAllow: [...now, subject] }, null, 2)}\n`,
      {
        mode: 0o600,
      },
    );
  }
}

function describe(call: GatedCall): { server?: string; toolName: string; args: JsonValue } {
  const input = (call.input ?? {}) as { server?: unknown; toolName?: unknown; args?: unknown };
  if (call.tool.name === 'mcp' && typeof input.server === 'string' && typeof input.toolName === 'string') {
    return { server: input.server, toolName: input.toolName, args: (input.args ?? {}) as JsonValue };
  }
  return { toolName: call.tool.name, args: (call.input ?? {}) as JsonValue };
}

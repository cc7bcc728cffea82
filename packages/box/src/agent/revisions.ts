/**
 * Everyday controls on the conversation's end (issue 18 item 5): regenerate the last reply, edit
 * the last prompt and resend, and remove a prompt still waiting in the queue. A regenerated or
 * edited prompt is a new prompt whose user message `supersedes` the last one (protocol
 * revisions.ts): the files stay append-only, the UI and the model drop the withdrawn turn. The
 * rules, with the error each refusal gives; AgentSession only applies them.
 */
import type { InboxInput, InboxRow } from '../stores/inbox.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { HostError } from './errors.ts';

/** What the user asks of the last prompt. */
export type PromptRevision = { kind: 'regenerate' } | { kind: 'edit'; messageId: string; prompt: string };

type PromptEntry = SequencedEntry & { kind: 'message'; content: string; clientNonce: string };

/** The last prompt the user typed (a user `message` with a client nonce; not a hidden one, not an answer). */
export function lastPrompt(entries: readonly SequencedEntry[]): PromptEntry | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as SequencedEntry & Record<string, unknown>;
    if (
      entry.kind === 'message' &&
      entry.role === 'user' &&
      typeof entry.clientNonce === 'string' &&
      entry.hidden !== true
    )
      return entry as PromptEntry;
  }
  return undefined;
}

/**
 * The inbox input that carries out `revision`, given the ledger and whether a turn runs or waits.
 * Throws HostError 409 when the conversation cannot be changed now, 400 for an empty prompt.
 */
export function revisionInput(
  entries: readonly SequencedEntry[],
  busy: boolean,
  revision: PromptRevision,
): InboxInput {
  const what = revision.kind === 'edit' ? 'edit a prompt' : 'regenerate the reply';
  if (busy) {
    throw new HostError(
      `cannot ${what} while a turn runs or prompts wait: press Stop or wait for the agent to finish, then try again`,
      409,
    );
  }
  const last = lastPrompt(entries);
  if (last === undefined) throw new HostError(`cannot ${what}: this agent has no prompt of yours yet`, 409);
  if (revision.kind === 'regenerate') return { kind: 'prompt', prompt: last.content, supersedes: last.id };
  if (revision.messageId !== last.id) {
    throw new HostError(
      `only the last prompt can be edited: ${revision.messageId} is not it (${last.id} is); send a new prompt instead`,
      409,
    );
  }
  if (revision.prompt.trim() === '') throw new HostError('the edited prompt is empty: type a message', 400);
  return { kind: 'prompt', prompt: revision.prompt, supersedes: last.id };
}

/**
 * The queued prompt `nonce` names, or why it cannot be removed: 404 when no input has that nonce,
 * 409 when it started already or is not a prompt.
 */
export function removablePrompt(pending: readonly InboxRow[], accepted: boolean, nonce: string): InboxRow {
  const row = pending.find((r) => r.nonce === nonce);
  if (row === undefined) {
    throw accepted
      ? new HostError('that prompt already started, so it cannot be removed: press Stop to end its turn', 409)
      : new HostError(`no prompt with nonce ${JSON.stringify(nonce)} was sent to this agent`, 404);
  }
  if (row.input.kind !== 'prompt')
    throw new HostError(`only a queued prompt can be removed; this input is a ${row.input.kind}`, 409);
  return row;
}

/** What the inbox row of a removed prompt says. */
export const REMOVED_DETAIL = 'removed by the user before it started';

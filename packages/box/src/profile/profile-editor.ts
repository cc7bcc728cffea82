/**
 * Changes an agent's profile, for the user (`updateAgent`) or the agent itself (`update_state
 * profile`): its store rewrites it atomically (profile.json), the live agent reads it at once (its next model
 * call has the new name and instructions), a rename writes Grok Bot's `event {type: "name-changed",
 * from, to}` ledger entry (grok-bot-format.md §7), a change the agent made itself is shown to the
 * user as a notice, and the roster is told (listAgents and open tabs update). Changes of one agent
 * run one after another.
 */
import { randomUUID } from 'node:crypto';
import type { LedgerEntry } from '@sendbox/protocol';
import type { HostEvent } from '../agent/events.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { ProfileSource } from '../stores/agent-stores.ts';
import type { Profile } from '../stores/files/profile.ts';
import { applyUpdate, type AgentUpdate, type AppliedUpdate, type ProfileField } from './agent-update.ts';

/** The live agent a change is made to (an AgentSession). */
export interface ProfileTarget {
  readonly id: string;
  readonly stores: { readonly profile: ProfileSource };
  /** The profile as stored now (read again when it changed). */
  currentProfile(): Promise<Profile>;
  readonly writer: { appendEntries(entries: LedgerEntry[]): SequencedEntry[] };
  now(): number;
}

export type ProfileAuthor = 'user' | 'agent';

export interface ProfileEditor {
  update(update: AgentUpdate, by: ProfileAuthor): Promise<AppliedUpdate>;
}

/** The longest new value a notice quotes. */
const NOTICE_QUOTE_CHARS = 600;

export class AgentProfiles {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly options: {
      /** The configured provider's name (a model id is recorded with it), or null without a model. */
      provider(): string | null;
      emit(event: HostEvent): void;
    },
  ) {}

  editorFor(target: ProfileTarget): ProfileEditor {
    return { update: (update, by) => this.serial(target.id, () => this.apply(target, update, by)) };
  }

  private async apply(target: ProfileTarget, update: AgentUpdate, by: ProfileAuthor): Promise<AppliedUpdate> {
    const before = await target.currentProfile();
    const now = target.now();
    const applied = applyUpdate(before, update, this.options.provider(), now);
    if (applied.changed.length === 0) return applied;
    // The profile first: it is the truth, and the ledger only ever tells of a change that was made.
    await target.stores.profile.write(applied.profile);
    await target.currentProfile();
    const entries: LedgerEntry[] = [];
    if (applied.changed.includes('name')) {
      entries.push({
        id: `ev-${randomUUID()}`,
        kind: 'event',
        event: { type: 'name-changed', from: before.name, to: applied.profile.name },
        timestampMs: now,
      });
    }
    if (by === 'agent') {
      entries.push({
        id: `n-${randomUUID()}`,
        kind: 'notice',
        level: 'info',
        reason: 'profile-changed',
        text: changeNotice(before, applied.profile, applied.changed),
        timestampMs: now,
      });
    }
    if (entries.length > 0) target.writer.appendEntries(entries);
    this.options.emit({ type: 'roster', agentId: target.id, change: 'updated' });
    return applied;
  }

  private serial<T>(agentId: string, work: () => Promise<T>): Promise<T> {
    const run = (this.chains.get(agentId) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    this.chains.set(agentId, settled);
    void settled.then(() => {
      if (this.chains.get(agentId) === settled) this.chains.delete(agentId);
    });
    return run;
  }
}

function quoted(text: string): string {
  const cut = text.length > NOTICE_QUOTE_CHARS ? `${text.slice(0, NOTICE_QUOTE_CHARS - 1)}…` : text;
  return JSON.stringify(cut);
}

/** What the user reads when the agent changed its own profile. */
export function changeNotice(before: Profile, after: Profile, changed: readonly ProfileField[]): string {
  const lines: string[] = [];
  for (const field of changed) {
    if (field === 'name')
      lines.push(`The agent renamed itself from ${quoted(before.name)} to ${quoted(after.name)}.`);
    else if (field === 'description')
      lines.push(`The agent changed its description to ${quoted(after.description)}.`);
    else if (field === 'instructions')
      lines.push(
        after.instructions
          ? `The agent changed its instructions to ${quoted(after.instructions)}.`
          : 'The agent cleared its instructions.',
      );
  }
  return lines.join('\n');
}

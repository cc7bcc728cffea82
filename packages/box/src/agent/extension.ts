/**
 * What a capability that works beside an agent's turns (background work today) adds at the turn's
 * seams, without the session knowing what it is. The host gives one list per agent
 * (`SessionConfig.extensions`); each member is optional.
 */
import type { JsonObject } from '@sendbox/txcript';
import type { Compaction } from '../context/compaction.ts';
import type { ContextLayer } from '../context/model-call.ts';
import type { InboxInput } from '../stores/inbox.ts';
import type { ToolContext } from '../tools/types.ts';
import type { AgentStores } from '../stores/agent-stores.ts';
import type { Profile } from '../stores/files/profile.ts';
import type { ToolCallRef } from './tool-dispatch.ts';
import type { TurnContext } from './turn-driver.ts';
import type { StepBudget } from './turn.ts';

/** The agent an extension is made for: its turn context, its stores, and its profile as stored now. */
export interface ExtensionAgent extends TurnContext {
  readonly stores: Pick<AgentStores, 'profile' | 'fence' | 'childTranscript'>;
  currentProfile(): Promise<Profile>;
}

/** The agent as an extension that starts turns of its own sees it (its session). */
export interface WakeDoor {
  /** No turn runs or waits, and a model can answer: an input now starts a turn. */
  readonly free: boolean;
  /** Commits an input of the host's in the durable inbox (once per nonce) and lets its turn start. */
  wake(nonce: string, input: InboxInput): Promise<void>;
}

export interface AgentExtension {
  /** Layers it adds to each model call's view, after the host's (context/model-call.ts). */
  readonly contextLayers?: readonly ContextLayer[];
  /** What fits each model call into the model's window (context/compaction.ts); the first one given is used. */
  readonly compaction?: Compaction;
  /**
   * Once, when the agent is opened, after a turn the box did not finish was closed: a hidden prompt
   * the model reads before its next turn (what a crash cut), or null. It is written to the JSONL.
   * Not asked of a session whose turns run elsewhere (a cluster gateway's): its turn worker's is.
   */
  opened?(): Promise<string | null>;
  /**
   * Each time a cluster's turn worker catches a session it kept up with what others wrote (before
   * and between the turns of a job): as `opened`, a hidden note of what the model must hear now (a
   * cluster's background work lost with its worker), or null.
   */
  caughtUp?(): Promise<string | null>;
  /** The agent is ready for turns: after it was opened, and each time its queued turns ran out. */
  ready?(door: WakeDoor): void;
  /** The session closed (its turns done): what the extension keeps for this session may go. */
  closed?(): void;
  /** Per turn: model steps the turn shares with what it starts (undefined: its own cap alone). */
  turnBudget?(turn: number): StepBudget | undefined;
  /** Per tool call: what the call's ToolContext gets. */
  toolServices?(call: ToolCallRef): Partial<ToolContext>;
  /** The turn closer: what an interrupted call's error adds, from its input (a `task` call names its child). */
  interruptedDetail?(turn: number, name: string, input: JsonObject): JsonObject | undefined;
}

/** The extensions of one agent, as the session asks them. */
export class AgentExtensions {
  constructor(private readonly list: readonly AgentExtension[]) {}

  get contextLayers(): ContextLayer[] {
    return this.list.flatMap((extension) => extension.contextLayers ?? []);
  }

  get compaction(): Compaction | undefined {
    return this.list.find((extension) => extension.compaction)?.compaction;
  }

  /** The notes of every extension, in order (none: an empty list). */
  opened(): Promise<string[]> {
    return this.notes((extension) => extension.opened?.());
  }

  /** The notes of every extension after a catch-up, in order. */
  caughtUp(): Promise<string[]> {
    return this.notes((extension) => extension.caughtUp?.());
  }

  private async notes(
    of: (extension: AgentExtension) => Promise<string | null> | undefined,
  ): Promise<string[]> {
    const notes: string[] = [];
    for (const extension of this.list) {
      const note = await of(extension);
      if (note) notes.push(note);
    }
    return notes;
  }

  ready(door: WakeDoor): void {
    for (const extension of this.list) extension.ready?.(door);
  }

  closed(): void {
    for (const extension of this.list) extension.closed?.();
  }

  turnBudget(turn: number): StepBudget | undefined {
    for (const extension of this.list) {
      const budget = extension.turnBudget?.(turn);
      if (budget) return budget;
    }
    return undefined;
  }

  toolServices(call: ToolCallRef): Partial<ToolContext> {
    return Object.assign(
      {},
      ...this.list.map((extension) => extension.toolServices?.(call) ?? {}),
    ) as Partial<ToolContext>;
  }

  interruptedDetail(turn: number): (name: string, input: JsonObject) => JsonObject | undefined {
    return (name, input) => {
      for (const extension of this.list) {
        const detail = extension.interruptedDetail?.(turn, name, input);
        if (detail) return detail;
      }
      return undefined;
    };
  }
}

/**
 * Agent and user memory (issue 21 item 3): what an agent saved with `update_state memory`, added
 * to the system prompt of every model call as a context layer and never written to the JSONL (as
 * guidance is not). The agent scope lives in the agent's folder; the user scope is one file every
 * agent shares; in a cluster both are rows every worker shares (memory-document.ts). The host keeps
 * one `MemoryBook`; each agent gets its extension.
 */
import type { AgentExtension, ExtensionAgent } from '../agent/extension.ts';
import { memoryHandler } from './memory-handler.ts';
import type { ContextLayer } from '../context/model-call.ts';
import { agentPaths, userMemoryFile } from '../stores/files/layout.ts';
import { MemoryFile } from './memory-file.ts';
import type { AgentFence } from '../stores/postgres/leases.ts';
import { memoryBytes, type MemoryEntry, type MemoryScope, type MemoryStore } from './memory-store.ts';

/** One agent's two scopes. */
export interface AgentMemory {
  scope(scope: MemoryScope): MemoryStore;
}

/** Where the memory is kept: the user's scope, and each agent's own. */
export interface MemoryPlace {
  user: MemoryStore;
  agent(agentId: string): MemoryStore;
  /** A cluster's: the same place, its writes behind a turn's lease fence (the session's stores'). */
  behind?(fence: AgentFence): MemoryPlace;
}

/** The files of a single box: `memory.json` at the data dir's top, and each agent's in its folder. */
export function memoryFiles(dataDir: string): MemoryPlace {
  return {
    user: new MemoryFile(userMemoryFile(dataDir), 'user'),
    agent: (agentId) => new MemoryFile(agentPaths(dataDir, agentId).memory, 'agent'),
  };
}

export class MemoryBook {
  private readonly agents = new Map<string, MemoryStore>();

  constructor(private readonly place: MemoryPlace) {}

  of(agentId: string): AgentMemory {
    let own = this.agents.get(agentId);
    if (!own) {
      own = this.place.agent(agentId);
      this.agents.set(agentId, own);
    }
    const store = own;
    return { scope: (scope) => (scope === 'user' ? this.place.user : store) };
  }

  /** Drops the agent's handle (its folder, memory.json with it, is gone). */
  agentDeleted(agentId: string): void {
    this.agents.delete(agentId);
  }

  /** What an agent adds: the memory layer on each model call, and `update_state memory`. */
  extensionFor(agent: ExtensionAgent): AgentExtension {
    const memory = this.of(agent.id);
    // A turn's saves pass the session's lease fence (a superseded worker writes no memory).
    const fence = agent.stores.fence;
    const place = fence && this.place.behind?.(fence);
    const saves: AgentMemory = place
      ? { scope: (scope) => (scope === 'user' ? place.user : place.agent(agent.id)) }
      : memory;
    return {
      contextLayers: [memoryLayer(memory)],
      toolServices: () => ({ memory: memoryHandler(saves, agent) }),
    };
  }
}

export function memoryLayer(memory: AgentMemory): ContextLayer {
  return { name: 'memory', system: () => memorySection(memory) };
}

const SCOPE_TITLES: Record<MemoryScope, string> = {
  agent: 'Agent memory (yours alone)',
  user: "User memory (shared by all of the user's agents)",
};

/** The system prompt's memory section: both scopes, their fill, and what to do when one is full. */
export async function memorySection(memory: AgentMemory): Promise<string> {
  const lines = [
    '# Memory',
    'What you saved with update_state memory; it lasts across conversations and restarts, and the user',
    'can read and delete it. Keep durable facts and preferences there, and forget entries that turn wrong.',
  ];
  for (const scope of ['agent', 'user'] as const) {
    const file = memory.scope(scope);
    let entries: MemoryEntry[];
    try {
      entries = await file.entries();
    } catch (error) {
      // A file the user broke is reported, not fatal: the call goes on without it.
      lines.push('', `## ${SCOPE_TITLES[scope]}`, `(unreadable: ${(error as Error).message})`);
      continue;
    }
    const bytes = memoryBytes(entries);
    lines.push('', `## ${SCOPE_TITLES[scope]}: ${bytes} of ${file.cap} bytes`);
    if (entries.length === 0) lines.push('(empty)');
    for (const entry of entries) lines.push(`- ${entry.text.replace(/\n/g, '\n  ')}`);
    if (bytes > file.cap)
      lines.push(
        `This scope is past its cap of ${file.cap} bytes: condense it now (forget outdated or repeated entries, write shorter ones).`,
      );
    else if (bytes >= file.cap * 0.9)
      lines.push('This scope is nearly full: condense it before you add more.');
  }
  return lines.join('\n');
}

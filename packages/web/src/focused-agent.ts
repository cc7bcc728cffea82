/**
 * The focused agent across visits, and its ledger fetched before the roster arrives.
 *
 * The agent to open is known before any API answer: the URL hash (`#agent=<id>`, kept by
 * App) or, failing that, the agent open on the last visit (localStorage). `openAgent` starts
 * for it at page start, in parallel with `getStatus` and `listAgents`, instead of after them:
 * the conversation then usually finds its entries already in memory when it mounts.
 */
import type { ApiClient, OpenedAgent } from './api/client.ts';

const LAST_AGENT_KEY = 'sendbox.lastAgent';

export function agentIdFromHash(hash: string): string | null {
  const match = /^#agent=(.+)$/.exec(hash);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return null; // a malformed escape: ignore the hash
  }
}

/** The hash's agent, else the one open on the last visit, else null. */
export function rememberedAgentId(): string | null {
  const fromHash = agentIdFromHash(window.location.hash);
  if (fromHash) return fromHash;
  try {
    return localStorage.getItem(LAST_AGENT_KEY);
  } catch {
    return null; // storage disabled
  }
}

export function rememberAgentId(id: string | null): void {
  try {
    if (id) localStorage.setItem(LAST_AGENT_KEY, id);
    else localStorage.removeItem(LAST_AGENT_KEY);
  } catch {
    // Storage disabled: the hash still carries the agent within this visit.
  }
}

/** One early `openAgent`, handed out at most once, to the conversation of that agent. */
export interface LedgerPrefetch {
  take(agentId: string): Promise<OpenedAgent> | null;
}

export function prefetchLedger(client: ApiClient, agentId: string): LedgerPrefetch {
  let pending: Promise<OpenedAgent> | null = client.openAgentRaw(agentId);
  // If no conversation ever takes it (the agent is gone), its failure is nobody's concern.
  pending.catch(() => undefined);
  return {
    take(id) {
      if (id !== agentId || !pending) return null;
      const taken = pending;
      pending = null;
      return taken;
    },
  };
}

export const noPrefetch: LedgerPrefetch = { take: () => null };

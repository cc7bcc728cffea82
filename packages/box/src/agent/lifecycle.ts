/**
 * Per-agent lifecycle: what the host tells capabilities that hold something per agent (an egress
 * proxy today; background tasks and MCP servers next) so they let it go at the right moment.
 * Listeners run in the order they were added; one that throws does not keep the others from running.
 */
import type { AgentPaths } from '../stores/files/layout.ts';

export interface AgentLifecycleListener {
  /** The user stopped the agent's running turn (its tool processes are being killed). */
  turnCancelled?(agentId: string): void | Promise<void>;
  /** The agent was deleted: its files are gone. */
  agentDeleted?(agentId: string, paths: AgentPaths): void | Promise<void>;
  /** The host is closing: every turn has settled. */
  hostClosed?(): void | Promise<void>;
}

export class AgentLifecycle {
  private readonly listeners: AgentLifecycleListener[] = [];

  add(listener: AgentLifecycleListener): void {
    this.listeners.push(listener);
  }

  async turnCancelled(agentId: string): Promise<void> {
    await this.each((listener) => listener.turnCancelled?.(agentId));
  }

  async agentDeleted(agentId: string, paths: AgentPaths): Promise<void> {
    await this.each((listener) => listener.agentDeleted?.(agentId, paths));
  }

  async hostClosed(): Promise<void> {
    await this.each((listener) => listener.hostClosed?.());
  }

  /** Runs every listener; the first failure is raised after all have run. */
  private async each(run: (listener: AgentLifecycleListener) => void | Promise<void>): Promise<void> {
    const failures: unknown[] = [];
    for (const listener of this.listeners) {
      try {
        await run(listener);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }
}

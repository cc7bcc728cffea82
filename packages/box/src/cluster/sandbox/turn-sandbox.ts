/**
 * The agent's files around a turn job on a cluster worker (issue 25 §4): before the job's first
 * turn, the latest sandbox snapshot is restored here and the attachments this worker has no copy of
 * are fetched (the agent may have moved from another worker); before each turn, the user uploads
 * accepted by other gateways since are placed into the sandbox (agent/upload-placement.ts); while the turns run, the sandbox is
 * snapshotted at each turn end and every interval; the job's last snapshot is taken before its lease
 * is let go, so whoever takes the agent next restores what this worker left.
 */
import type { HostEvent } from '../../agent/events.ts';
import type { SequencedEntry } from '../../stores/ledger.ts';
import type { SandboxSnapshots } from './sandbox-snapshots.ts';

export interface TurnSandboxOptions {
  snapshots: SandboxSnapshots;
  /** Fetches the agent's attachments this worker has no copy of. */
  fetchAttachments(agentId: string): Promise<unknown>;
  /** The local copy of the agent's attachment `sha256` (fetched from the bucket when missing), or null. */
  attachmentCopy(agentId: string, sha256: string): Promise<string | null>;
  subscribe(listener: (event: HostEvent) => void): () => void;
  runQueuedTurns(
    agentId: string,
    signal: AbortSignal,
    beforeTurn: (entries: readonly SequencedEntry[]) => Promise<void>,
  ): Promise<void>;
  /** A snapshot during the turns failed (the next one tries again). */
  report(agentId: string, error: unknown): void;
}

export async function runWithSandbox(
  options: TurnSandboxOptions,
  agentId: string,
  signal: AbortSignal,
  epoch: number,
): Promise<void> {
  // Before any tool runs here: a sandbox that cannot be restored runs no turn (the job is retried).
  await options.snapshots.restore(agentId);
  await options.fetchAttachments(agentId);
  const held = options.snapshots.hold(agentId, epoch, (error) => options.report(agentId, error));
  const unsubscribe = options.subscribe((event) => {
    // Working → idle (or waiting on the user): a turn ended.
    if (event.type === 'state' && event.agentId === agentId && event.state !== 'working') held.turnEnded();
  });
  let failed = false;
  try {
    await options.runQueuedTurns(agentId, signal, async (entries) => {
      const placed = await options.snapshots.placeUploads(agentId, entries, (sha256) =>
        options.attachmentCopy(agentId, sha256),
      );
      for (const { error } of placed.failed) options.report(agentId, error);
    });
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    unsubscribe();
    // The turns' own failure is the job's error; the last snapshot's is reported beside it.
    await held.finish(signal.aborted).catch((error: unknown) => {
      if (failed) options.report(agentId, error);
      else throw error;
    });
  }
}

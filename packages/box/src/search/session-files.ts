/**
 * Where txcript reads the box's own sessions (Grok Bot's layout: `agent-transcripts/`, `agents/`):
 * the data dir itself on a box on files, where every agent's files are written as it goes; on a
 * cluster worker, its local copy of the rows (cluster/layout-mirror.ts), which `settle` brings up
 * to date.
 */
import path from 'node:path';

export interface SessionFiles {
  /** The `agent-transcripts` folder. */
  readonly transcripts: string;
  /** The `agents` folder. */
  readonly agents: string;
  /** Resolves once the folders hold every write the host told of before the call. */
  settle(): Promise<void>;
}

/** A box on files: its data dir, always current. */
export function dataDirSessionFiles(dataDir: string): SessionFiles {
  return {
    transcripts: path.join(dataDir, 'agent-transcripts'),
    agents: path.join(dataDir, 'agents'),
    settle: () => Promise.resolve(),
  };
}

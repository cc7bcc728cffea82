/**
 * The subagents a duplicated agent takes along (the host's `duplicateAgent`): every child of the
 * original that is not running, its task record and its transcript, so the copy's `openSubagent`
 * shows its steps. A child still running is left out: its transcript is not finished, and the copy
 * does not run it (the copy's `openSubagent` and `await` do not know it).
 *
 * Each copied child gets a new id in the copy. Grok Bot's layout names a child's transcript by its id
 * alone (`agent-transcripts/<child>/<child>.jsonl`: file mode's file, a cluster's export and layout
 * mirror), so under the same id the copy's child would be the original's file, and deleting one agent
 * would delete the other's children. Every mention of an old id in what the copy takes (its JSONL,
 * its ledger entries, the children's records and transcripts) is changed to the new id, so the
 * copy's `task` results name its own children and txcript links them to the copy.
 */
import type { TranscriptLog } from '../stores/transcript.ts';
import type { TaskRecord, TaskStore } from '../tasks/task-book.ts';
import { newSubagentId } from '../tools/task/index.ts';

/** One agent's side of a copy: its task book and its children's transcripts. */
export interface ChildrenOf {
  book: TaskStore;
  transcript(childId: string): Promise<TranscriptLog>;
}

export class ChildCopies {
  private constructor(
    /** Each copied child's id in the original, and its id in the copy. */
    readonly ids: ReadonlyMap<string, string>,
    private readonly records: readonly TaskRecord[],
  ) {}

  /** The children among an agent's task records that a copy takes (those not running), each with a new id. */
  static of(records: readonly TaskRecord[]): ChildCopies {
    const copied = records.filter(
      (record) => record.kind === 'subagent' && record.agentId === record.id && record.state !== 'running',
    );
    return new ChildCopies(new Map(copied.map((record) => [record.id, newSubagentId()])), copied);
  }

  /** `text` with every copied child's id changed to its id in the copy (ids are UUIDs: no other text matches). */
  rename(text: string): string {
    let renamed = text;
    for (const [from, to] of this.ids) renamed = renamed.split(from).join(to);
    return renamed;
  }

  /**
   * Writes each child's transcript, then its record, into the copy, under its new id; its end counts
   * as told there (a background child's end wakes the original, not the copy).
   */
  async copy(from: ChildrenOf, to: ChildrenOf): Promise<void> {
    for (const record of this.records) {
      const source = await from.transcript(record.id);
      let text: string;
      try {
        text = await source.read();
      } finally {
        source.close();
      }
      if (text !== '') {
        const target = await to.transcript(this.ids.get(record.id)!);
        try {
          target.append(this.rename(text));
        } finally {
          target.close();
        }
      }
      // Told: the copy owes no wake for work the original ran (its own wake may be under way).
      to.book.copied({ ...(JSON.parse(this.rename(JSON.stringify(record))) as TaskRecord), notice: 'told' });
    }
  }
}

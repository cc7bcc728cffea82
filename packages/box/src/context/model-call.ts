/**
 * The per-model-call view: what one model call reads, built afresh for every call from the stored
 * history. It is the system prompt plus the history, passed through the agent's context layers in
 * order. Nothing a layer adds is written to the transcript, so a live agent and one read back
 * after a restart are given the same view (docs/runtime.md, "Where a capability plugs in").
 *
 * Today's one layer is the guidance and the reminders (injections.ts). Memory adds a system
 * section; pruning and compaction rewrite the messages the model reads, never the records.
 */
import type { ModelMessage } from '../providers/types.ts';
import type { AgentPaths } from '../stores/files/layout.ts';
import type { SequencedEntry } from '../stores/ledger.ts';

/** The agent a host's layers are made for (`contextLayers(agent)`). */
export interface LayerAgent {
  id: string;
  paths: AgentPaths;
  /** Its ledger entries as the session holds them (read-only; the uploads are found here). */
  entries(): readonly SequencedEntry[];
}

export interface ModelCallView {
  system: string;
  messages: ModelMessage[];
}

export interface ContextLayer {
  /** What the layer is, for errors. */
  readonly name: string;
  /** A section appended to the system prompt (after a blank line), or undefined for none. */
  system?(): string | undefined | Promise<string | undefined>;
  /** The messages the model reads, from those the previous layer gave (a new array; the input is not changed). */
  messages?(messages: readonly ModelMessage[]): ModelMessage[] | Promise<ModelMessage[]>;
}

export async function modelCallView(
  system: string,
  history: readonly ModelMessage[],
  layers: readonly ContextLayer[],
): Promise<ModelCallView> {
  const sections = [system];
  let messages: readonly ModelMessage[] = history;
  for (const layer of layers) {
    const section = await layer.system?.();
    if (section) sections.push(section);
    if (layer.messages) messages = await layer.messages(messages);
  }
  return { system: sections.join('\n\n'), messages: messages === history ? [...history] : [...messages] };
}

/**
 * An agent's model transcript: Grok Bot JSONL, append-only. The store holds the exact lines the
 * grok_bot codec rendered (stores/transcript-writer.ts is the one writer); the files backend is
 * `agent-transcripts/<id>/<id>.jsonl` (stores/files/jsonl.ts).
 */
import { grokBot, type JsonObject, type JsonValue } from '@sendbox/txcript';

/** One JSONL block, as the grok_bot codec reads it (grok-bot-format.md §3). */
export type TranscriptBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: 'tool_use'; name: string; input: JsonObject }
  | { type: 'tool_result'; name: string; result: JsonValue };

export interface TranscriptRecord {
  role: 'user' | 'assistant' | 'tool';
  blocks: TranscriptBlock[];
}

export interface TranscriptLog {
  /** Names the log in errors and warnings (the files backend: the JSONL's path). */
  readonly source: string;
  /**
   * Appends rendered lines (each ending with a newline) whole: on failure nothing of them stays and
   * the error is thrown. A torn last line another writer (or a crash) left is ended first.
   */
  append(text: string): void;
  /** The whole log as it is now; from here on `unchanged` compares against it plus this log's own appends. */
  read(): Promise<string>;
  /** True when nobody else has changed the log since `read` (false before the first read). */
  unchanged(): boolean;
  close(): void;
}

/** The log's records as the grok_bot codec reads them now (a torn last line skipped). */
export async function readRecords(log: TranscriptLog): Promise<JsonObject[]> {
  return grokBot.text
    .parse(await log.read(), log.source)
    .records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
}

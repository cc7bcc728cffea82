/**
 * The kinds of searchable content and a session's searchable rows, apart from
 * documents.ts, which makes the rows: a search of an index that is up to date
 * loads these alone, and no codec (documents.ts reads sessions through them).
 */

/** The kinds of content, in the order of the index's columns. */
export const KINDS = ['title', 'user', 'assistant', 'thinking', 'tool_input', 'tool_output'] as const;
export type Kind = (typeof KINDS)[number];

/** How each kind reads in output. */
export const KIND_LABELS: Record<Kind, string> = {
  title: 'title',
  user: 'user text',
  assistant: 'assistant text',
  thinking: 'thinking',
  tool_input: 'tool input',
  tool_output: 'tool output',
};

export interface SearchRow {
  /** 0 for the title row, else the 1-based message number `view` prints. */
  message: number;
  /** The range to reference: `#N`, or `#N-M` when the message alone would split a tool call from its result. */
  range: string;
  texts: Record<Kind, string>;
}

/**
 * The agent's task list as the page follows it: `openAgent` gives it on open, and each successful
 * `update_todos` tool-call entry carries the list after the call (`todos`, a sendbox extension of
 * the entry) as it arrives.
 */
import { z } from 'zod';
import { todoItemSchema, type TodoItem, type TranscriptEntry } from './api/types.ts';

const listed = z.array(todoItemSchema);

/** The list an entry carries, or null for any other entry. */
export function todosOf(entry: TranscriptEntry): TodoItem[] | null {
  if (entry.kind !== 'tool-call' || entry.name !== 'update_todos' || entry.status !== 'success') return null;
  const parsed = listed.safeParse((entry as { todos?: unknown }).todos);
  return parsed.success ? parsed.data : null;
}

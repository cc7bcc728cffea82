/**
 * The todo list an agent had, rebuilt from its JSONL records, so a restart keeps it. Each
 * successful `update_todos` result holds the whole list after that call (`{id, content, status}`,
 * VR parity 10); each todo's `createdAt` / `updatedAt` come from the call's recorded input, as
 * real files carry them there. A failed or unanswered call changes nothing.
 */
import type { JsonValue } from '@sendbox/txcript';
import { isJsonObject, jsonArray, type TodoItem } from '../types.ts';

type Status = TodoItem['status'];
const STATUSES = new Set<Status>(['pending', 'in_progress', 'completed', 'cancelled']);

export function todosFromRecords(records: ReadonlyArray<{ [key: string]: JsonValue }>): TodoItem[] {
  let todos: TodoItem[] = [];
  const calls: Array<{ [key: string]: JsonValue }> = []; // inputs of update_todos calls awaiting their result
  for (const record of records) {
    const message = record.message;
    if (!isJsonObject(message)) continue;
    for (const block of jsonArray(message.content)) {
      if (!isJsonObject(block) || block.name !== 'update_todos') continue;
      if (record.role === 'assistant' && block.type === 'tool_use') {
        calls.push(isJsonObject(block.input) ? block.input : {});
      } else if (record.role === 'tool' && block.type === 'tool_result') {
        const input = calls.shift() ?? {};
        const result = block.result;
        const success = isJsonObject(result) && isJsonObject(result.success) ? result.success : null;
        if (!success || !Array.isArray(success.todos)) continue;
        todos = listAfter(success.todos, input, todos);
      }
    }
  }
  return todos;
}

function listAfter(
  listed: JsonValue[],
  input: { [key: string]: JsonValue },
  before: readonly TodoItem[],
): TodoItem[] {
  const stamped = new Map<string, { createdAt?: number; updatedAt?: number }>();
  for (const todo of jsonArray(input.todos)) {
    if (isJsonObject(todo) && typeof todo.id === 'string') {
      stamped.set(todo.id, { ...timeOf('createdAt', todo), ...timeOf('updatedAt', todo) });
    }
  }
  const previous = new Map(before.map((t) => [t.id, t]));
  const out: TodoItem[] = [];
  for (const todo of listed) {
    if (!isJsonObject(todo) || typeof todo.id !== 'string' || typeof todo.content !== 'string') continue;
    const status = STATUSES.has(todo.status as Status) ? (todo.status as Status) : 'pending';
    const times = stamped.get(todo.id);
    const earlier = previous.get(todo.id);
    const createdAt = times?.createdAt ?? earlier?.createdAt ?? 0;
    out.push({
      id: todo.id,
      content: todo.content,
      status,
      createdAt,
      updatedAt: times?.updatedAt ?? earlier?.updatedAt ?? createdAt,
    });
  }
  return out;
}

function timeOf(key: 'createdAt' | 'updatedAt', todo: { [key: string]: JsonValue }): { [k: string]: number } {
  const value = todo[key];
  // Real files have numbers or epoch-ms strings (C10).
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(ms) ? { [key]: ms } : {};
}

/**
 * `update_todos`: the agent's task list (the `{merge, todos}` shape of C15). As in real files (VR
 * parity 10), each todo's `createdAt`/`updatedAt` are on the recorded input and the result's todos
 * are `{id, content, status}`.
 */
import { z } from 'zod';
import type { JsonValue } from '@sendbox/txcript';
import { defineTool, successFields, type TodoItem, type ToolOutcome } from '../types.ts';

const todoStatus = z.enum(['pending', 'in_progress', 'completed', 'cancelled']);

export const updateTodosInput = z.strictObject({
  merge: z
    .boolean()
    .optional()
    .describe('true: update the listed items by id and keep the others; false (default): replace the list.'),
  todos: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        content: z.string().min(1, 'content must describe the task'),
        status: todoStatus,
      }),
    )
    .min(1, 'give at least one todo'),
});

type UpdateTodosInput = z.output<typeof updateTodosInput>;

/** The listed todos with their times: `createdAt` kept from the list for an id it holds, `updatedAt` now. */
function stamped(input: UpdateTodosInput, todos: readonly TodoItem[], now: number): TodoItem[] {
  const previous = new Map(todos.map((item) => [item.id, item]));
  return input.todos.map((item) => ({
    ...item,
    createdAt: previous.get(item.id)?.createdAt ?? now,
    updatedAt: now,
  }));
}

export const updateTodosTool = defineTool({
  name: 'update_todos',
  description: 'Create or update your task list. Items have an id, content and a status.',
  input: updateTodosInput,
  recordedInput(input, ctx) {
    return {
      ...(input.merge !== undefined ? { merge: input.merge } : {}),
      todos: stamped(input, ctx.todos, ctx.now()).map((item): JsonValue => ({ ...item })),
    };
  },
  run(input, ctx): Promise<ToolOutcome> {
    const next: TodoItem[] = input.merge ? [...ctx.todos] : [];
    for (const updated of stamped(input, ctx.todos, ctx.now())) {
      const at = next.findIndex((existing) => existing.id === updated.id);
      if (at >= 0) next[at] = updated;
      else next.push(updated);
    }
    ctx.todos.splice(0, ctx.todos.length, ...next);
    const done = next.filter((item) => item.status === 'completed').length;
    return Promise.resolve({
      envelope: {
        success: {
          wasMerge: input.merge ?? false,
          totalCount: next.length,
          todos: next.map(({ id, content, status }): JsonValue => ({ id, content, status })),
        },
      },
      summary: `${done}/${next.length} done`,
    });
  },
  /** The list after the call, so the UI's task panel follows it live. */
  entryFields(result) {
    const todos = successFields(result)?.todos;
    return Array.isArray(todos) ? { todos } : undefined;
  },
});

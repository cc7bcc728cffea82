/** `update_todos`: the agent's task list (the `{merge, todos}` shape of C15). */
import { z } from 'zod';
import { defineTool, type JsonValue, type TodoItem, type ToolOutcome } from './types.ts';

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

export const updateTodosTool = defineTool({
  name: 'update_todos',
  description: 'Create or update your task list. Items have an id, content and a status.',
  input: updateTodosInput,
  run(input, ctx): Promise<ToolOutcome> {
    const now = ctx.now();
    const previous = new Map(ctx.todos.map((item) => [item.id, item]));
    const next: TodoItem[] = input.merge ? [...ctx.todos] : [];
    for (const item of input.todos) {
      const before = previous.get(item.id);
      const updated: TodoItem = { ...item, createdAt: before?.createdAt ?? now, updatedAt: now };
      const at = next.findIndex((existing) => existing.id === item.id);
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
          todos: next.map((item): JsonValue => ({ ...item })),
        },
      },
      summary: `${done}/${next.length} done`,
    });
  },
});

import { describe, expect, it } from 'vitest';
import { useToolSandbox } from '../test-context.ts';
import { updateTodosTool } from './index.ts';

const box = useToolSandbox();

describe('update_todos', () => {
  it('replaces, then merges by id', async () => {
    await updateTodosTool.run(
      {
        todos: [
          { id: '1', content: 'a', status: 'pending' },
          { id: '2', content: 'b', status: 'pending' },
        ],
      },
      box.ctx,
    );
    const out = await updateTodosTool.run(
      { merge: true, todos: [{ id: '1', content: 'a', status: 'completed' }] },
      box.ctx,
    );
    expect(out.envelope).toMatchObject({ success: { wasMerge: true, totalCount: 2 } });
    expect(box.ctx.todos.map((t) => t.status)).toEqual(['completed', 'pending']);
    expect(out.summary).toBe('1/2 done');
  });

  it('puts the todo times on the recorded input, not on the result (real files)', async () => {
    box.ctx.todos.push({ id: '1', content: 'a', status: 'pending', createdAt: 500, updatedAt: 500 });
    const input = {
      merge: true,
      todos: [
        { id: '1', content: 'a', status: 'completed' as const },
        { id: '2', content: 'b', status: 'pending' as const },
      ],
    };
    expect(updateTodosTool.recordedInput!(input, box.ctx)).toEqual({
      merge: true,
      todos: [
        { id: '1', content: 'a', status: 'completed', createdAt: 500, updatedAt: 1000 },
        { id: '2', content: 'b', status: 'pending', createdAt: 1000, updatedAt: 1000 },
      ],
    });
    const out = await updateTodosTool.run(input, box.ctx);
    expect(out.envelope).toEqual({
      success: {
        wasMerge: true,
        totalCount: 2,
        todos: [
          { id: '1', content: 'a', status: 'completed' },
          { id: '2', content: 'b', status: 'pending' },
        ],
      },
    });
    expect(box.ctx.todos[0]).toMatchObject({ createdAt: 500, updatedAt: 1000 });
  });
});

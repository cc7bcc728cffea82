import { expect, it } from 'vitest';
import type { JsonValue } from '@sendbox/txcript';
import { todosFromRecords } from './todos-from-records.ts';

const call = (input: JsonValue) => ({
  role: 'assistant',
  message: { content: [{ type: 'tool_use', name: 'update_todos', input }] },
});
const result = (value: JsonValue) => ({
  role: 'tool',
  message: { content: [{ type: 'tool_result', name: 'update_todos', result: value }] },
});

it('rebuilds the list from the last successful update_todos, with the times its input recorded', () => {
  const records = [
    { role: 'user', message: { content: [{ type: 'text', text: '[t0u]\nplan it' }] } },
    call({
      todos: [
        { id: 'a', content: 'Write the plan', status: 'in_progress', createdAt: 100, updatedAt: 100 },
        { id: 'b', content: 'Ship it', status: 'pending', createdAt: 100, updatedAt: 100 },
      ],
      toolCallId: 'c1',
    }),
    result({
      success: {
        wasMerge: false,
        totalCount: 2,
        todos: [
          { id: 'a', content: 'Write the plan', status: 'in_progress' },
          { id: 'b', content: 'Ship it', status: 'pending' },
        ],
      },
    }),
    call({
      merge: true,
      todos: [{ id: 'a', content: 'Write the plan', status: 'completed', createdAt: 100, updatedAt: 200 }],
    }),
    result({
      success: {
        wasMerge: true,
        totalCount: 2,
        todos: [
          { id: 'a', content: 'Write the plan', status: 'completed' },
          { id: 'b', content: 'Ship it', status: 'pending' },
        ],
      },
    }),
    // A refused call changes nothing.
    call({ todos: [] }),
    result({ error: { error: 'Invalid update_todos input' } }),
  ];
  expect(todosFromRecords(records)).toEqual([
    { id: 'a', content: 'Write the plan', status: 'completed', createdAt: 100, updatedAt: 200 },
    { id: 'b', content: 'Ship it', status: 'pending', createdAt: 100, updatedAt: 100 },
  ]);
});

it('is empty without update_todos records, and reads epoch-ms strings', () => {
  expect(todosFromRecords([])).toEqual([]);
  expect(
    todosFromRecords([
      call({
        todos: [
          {
            id: 'x',
            content: 'X',
            status: 'pending',
            createdAt: '1788485400095',
            updatedAt: '1788485400095',
          },
        ],
      }),
      result({ success: { todos: [{ id: 'x', content: 'X', status: 'pending' }] } }),
    ]),
  ).toEqual([
    { id: 'x', content: 'X', status: 'pending', createdAt: 1788485400095, updatedAt: 1788485400095 },
  ]);
});

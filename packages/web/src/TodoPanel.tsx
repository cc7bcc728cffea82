/**
 * The agent's task list (its `update_todos` calls), above the composer: one line saying how many
 * are done that opens to the list. Hidden while the list is empty. Whether it is open is kept per
 * page, so it stays as the user left it while the list changes live.
 */
import { useId, useState } from 'react';
import type { TodoItem } from './api/types.ts';

const MARKS: Readonly<Record<string, string>> = {
  completed: '✓',
  in_progress: '◐',
  cancelled: '–',
  pending: '○',
};

const STATUS_WORDS: Readonly<Record<string, string>> = {
  completed: 'done',
  in_progress: 'in progress',
  cancelled: 'cancelled',
  pending: 'to do',
};

export function TodoPanel({ todos }: { todos: readonly TodoItem[] }) {
  const [open, setOpen] = useState(false);
  const listId = useId();
  if (todos.length === 0) return null;
  const done = todos.filter((t) => t.status === 'completed').length;
  const current = todos.find((t) => t.status === 'in_progress');
  return (
    <section
      className={`todo-panel${open ? ' open' : ''}`}
      aria-label="Agent's tasks"
      data-testid="todo-panel"
    >
      <button
        type="button"
        className="todo-toggle"
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen((was) => !was)}
        data-testid="todo-toggle"
      >
        <span className="todo-chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        <span className="todo-count">
          Tasks {done}/{todos.length} done
        </span>
        {current && !open && (
          <span className="todo-current" title={current.content}>
            {current.content}
          </span>
        )}
      </button>
      {open && (
        <ol id={listId} className="todo-list" data-testid="todo-list">
          {todos.map((todo) => (
            <li
              key={todo.id}
              className={`todo todo-${/^[a-z_]+$/.test(todo.status) ? todo.status : 'other'}`}
            >
              <span className="todo-mark" aria-hidden="true">
                {MARKS[todo.status] ?? '○'}
              </span>
              <span className="todo-content">{todo.content}</span>
              <span className="sr-only"> ({STATUS_WORDS[todo.status] ?? todo.status})</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

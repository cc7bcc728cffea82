/**
 * A background task on its tool row: a command's live output tail with a Stop button while it
 * runs and its exit once it ended; a subagent's steps (thinking, tool calls) as they happen,
 * or read from its transcript when the row is opened later. `RunningTasks` shows the tasks
 * whose tool call has no row yet (a subagent in the foreground), after the conversation.
 */
import { useContext, useEffect, useState } from 'react';
import type { TaskView, TranscriptEntry } from '../api/types.ts';
import { TasksContext } from '../tasks-context.ts';
import { Bubble } from './Bubble.tsx';
import { formatDuration } from './ToolCallBubble.tsx';

function stateText(task: TaskView): string {
  if (task.state === 'running') return 'running';
  if (task.state === 'interrupted') return 'interrupted (the box stopped)';
  if (task.kind === 'subagent') return 'done';
  if (task.reason === 'timed-out') return 'killed at its time limit';
  if (task.reason === 'stopped') return 'stopped';
  if (task.reason === 'spawn-error') return 'could not start';
  return `exit ${task.exitCode ?? '?'}`;
}

function StateDot({ task }: { task: TaskView }) {
  return (
    <span
      className={`status-dot status-${task.state === 'running' ? 'running' : 'other'}`}
      aria-hidden="true"
    />
  );
}

function StopButton({ task }: { task: TaskView }) {
  const tasks = useContext(TasksContext);
  const [stopping, setStopping] = useState(false);
  if (!tasks || task.state !== 'running') return null;
  return (
    <button
      type="button"
      className="task-stop"
      data-testid="task-stop"
      disabled={stopping}
      onClick={() => {
        setStopping(true);
        void tasks.stopTask(task.id).finally(() => setStopping(false));
      }}
    >
      {stopping ? 'Stopping…' : 'Stop'}
    </button>
  );
}

/**
 * A child's steps: those its events brought while this page watched, or its transcript's when
 * that holds more (the page opened, or its event stream connected, after the child started). The
 * transcript is read again at each step the task reports, so a running child's row stays live.
 */
function ChildSteps({ task }: { task: TaskView }) {
  const tasks = useContext(TasksContext);
  const seen = tasks?.childSteps.get(task.id);
  const [loaded, setLoaded] = useState<readonly TranscriptEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!tasks) return;
    let gone = false;
    tasks.loadChild(task.id).then(
      (entries) => {
        if (gone) return;
        setLoaded(entries);
        setError(null);
      },
      (cause: unknown) => !gone && setError(cause instanceof Error ? cause.message : String(cause)),
    );
    return () => {
      gone = true;
    };
  }, [tasks, task.id, task.steps, task.state]);
  const steps = seen && seen.length >= (loaded?.length ?? 0) ? seen : loaded;
  if (!steps && error) return <p className="error">{error}</p>;
  if (!steps) return <p className="placeholder">Loading the subagent's steps…</p>;
  if (steps.length === 0) return <p className="placeholder">No steps yet.</p>;
  return (
    <div className="child-steps" data-testid="child-steps">
      {steps.map((entry) => (
        <Bubble key={entry.id} entry={entry} answer={undefined} />
      ))}
    </div>
  );
}

/** What a tool row shows of the task its call started. */
export function TaskPanel({ task }: { task: TaskView }) {
  if (task.kind === 'command') {
    return (
      <div className="task-panel" data-testid="task-panel" data-state={task.state}>
        <div className="task-head">
          <StateDot task={task} />
          <span data-testid="task-state">{stateText(task)}</span>
          {typeof task.outputLength === 'number' && (
            <span className="tool-duration">{task.outputLength} bytes</span>
          )}
          <StopButton task={task} />
        </div>
        {task.tail ? (
          <pre className="task-tail" data-testid="task-tail" aria-live="polite">
            {task.tail}
          </pre>
        ) : null}
        {task.outputPath && <p className="task-file">Output: {task.outputPath}</p>}
      </div>
    );
  }
  return (
    <details className="task-panel task-child" data-testid="task-child" data-state={task.state}>
      <summary className="task-head">
        <StateDot task={task} />
        <span data-testid="task-state">Subagent {stateText(task)}</span>
        {typeof task.steps === 'number' && (
          <span className="tool-duration">
            {task.steps} {task.steps === 1 ? 'step' : 'steps'}
          </span>
        )}
        {task.endedAt !== undefined && (
          <span className="tool-duration">{formatDuration(task.endedAt - task.startedAt)}</span>
        )}
        <StopButton task={task} />
      </summary>
      <ChildSteps task={task} />
    </details>
  );
}

/** Tasks whose tool call has no row in the conversation yet: a subagent running in the foreground. */
export function RunningTasks({ rowToolCalls }: { rowToolCalls: ReadonlySet<string> }) {
  const tasks = useContext(TasksContext);
  if (!tasks) return null;
  const running = [...tasks.byToolCall.values()].filter(
    (task) => task.state === 'running' && !rowToolCalls.has(task.toolCallId),
  );
  return (
    <>
      {running.map((task) => (
        <article key={task.id} className="bubble bubble-tool-call side-meta" data-testid="running-task">
          <div className="tool-call">
            <div className="tool-row">
              <span className="tool-icon" aria-hidden="true">
                {task.kind === 'subagent' ? '↳' : '>_'}
              </span>
              <code className="tool-name">{task.kind === 'subagent' ? 'task' : 'shell'}</code>
              <span className="tool-summary" title={task.label}>
                {task.label}
              </span>
            </div>
            <TaskPanel task={task} />
          </div>
        </article>
      ))}
    </>
  );
}

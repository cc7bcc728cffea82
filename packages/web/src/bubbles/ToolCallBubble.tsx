/**
 * A tool call: one row with an icon, the tool name, the model's `description` of the call
 * (else the host's one-line summary), status and duration; it opens (`details`) to the input
 * and the output as the model read them, scrubbed by the host. The name never shrinks; the
 * description takes what is left and ends in an ellipsis.
 */
import type { ToolCallEntry } from '@sendbox/protocol';
import { useContext } from 'react';
import { TasksContext } from '../tasks-context.ts';
import { TaskPanel } from './TaskPanel.tsx';

const ICONS: Readonly<Record<string, string>> = {
  shell: '>_',
  read: '▤',
  write: '✎',
  edit: '✎',
  grep: '⌕',
  glob: '⌕',
  ls: '▦',
  delete: '✕',
  web_search: '⌕',
  web_fetch: '↓',
  update_todos: '☑',
  task: '↳',
  await: '◷',
};

const STATUS_LABEL: Readonly<Record<string, string>> = {
  success: 'done',
  failure: 'failed',
  error: 'error',
  running: 'running',
  stopped: 'stopped',
};

/** The sendbox extension keys a tool-call entry may carry (packages/box/src/agent/tool-details.ts). */
interface ToolCallDetails {
  description?: unknown;
  input?: unknown;
  output?: unknown;
  durationMs?: unknown;
  /** The model's id of the call: a background task it started is found by it. */
  toolCallId?: unknown;
  /** An edit's unified diff (`@@` hunks; ` `, `-`, `+` lines). */
  diff?: unknown;
}

/** A diff, one line per row, added and removed lines marked for colour and for screen readers. */
function Diff({ text }: { text: string }) {
  return (
    <pre className="tool-diff" data-testid="tool-diff">
      {text.split('\n').map((line, i) => {
        const kind = line.startsWith('@@')
          ? 'hunk'
          : line.startsWith('+')
            ? 'added'
            : line.startsWith('-')
              ? 'removed'
              : 'context';
        return (
          <span key={i} className={`diff-line diff-${kind}`}>
            {kind === 'added' && <span className="sr-only">added: </span>}
            {kind === 'removed' && <span className="sr-only">removed: </span>}
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function ToolCallBubble({ entry }: { entry: ToolCallEntry }) {
  const details = entry as ToolCallEntry & ToolCallDetails;
  const tasks = useContext(TasksContext);
  const task = typeof details.toolCallId === 'string' ? tasks?.byToolCall.get(details.toolCallId) : undefined;
  // Stop ended it: it reads "stopped", not "failed".
  const status = (entry as { stopped?: unknown }).stopped === true ? 'stopped' : entry.status;
  const description = typeof details.description === 'string' ? details.description : '';
  const input = typeof details.input === 'string' ? details.input : '';
  const output = typeof details.output === 'string' ? details.output : '';
  const duration = typeof details.durationMs === 'number' ? formatDuration(details.durationMs) : '';
  const diff = typeof details.diff === 'string' ? details.diff : '';
  const line = description || entry.summary || '';
  const statusClass = /^[a-z-]+$/.test(status) ? status : 'other';
  const head = (
    <>
      <span className="tool-icon" aria-hidden="true">
        {ICONS[entry.name] ?? '⚙'}
      </span>
      <code className="tool-name">{entry.name}</code>
      {line && (
        <span className="tool-summary" title={line}>
          {line}
        </span>
      )}
      <span className="tool-meta">
        <span className={`status-dot status-${statusClass}`} aria-hidden="true" />
        <span className="tool-status">{STATUS_LABEL[status] ?? status}</span>
        {duration && <span className="tool-duration">{duration}</span>}
      </span>
    </>
  );
  const panel = task ? <TaskPanel task={task} /> : null;
  if (!input && !output && !diff)
    return panel ? (
      <div className="tool-call">
        <div className="tool-row">{head}</div>
        {panel}
      </div>
    ) : (
      <div className="tool-call tool-row">{head}</div>
    );
  const opened = (
    <details className="tool-call" data-testid="tool-details">
      <summary className="tool-row" data-testid="tool-summary">
        {head}
      </summary>
      <div className="tool-body">
        {diff && (
          <>
            <h4>Changes</h4>
            <Diff text={diff} />
          </>
        )}
        {input && (
          <>
            <h4>Input</h4>
            <pre data-testid="tool-input">{input}</pre>
          </>
        )}
        {output && (
          <>
            <h4>Output</h4>
            <pre data-testid="tool-output">{output}</pre>
          </>
        )}
      </div>
    </details>
  );
  return panel ? (
    <div className="tool-call-with-task">
      {opened}
      {panel}
    </div>
  ) : (
    opened
  );
}

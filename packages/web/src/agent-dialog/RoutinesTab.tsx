/**
 * The agent's routines (`listRoutines`, `updateRoutine`): each with its schedule, its next run in
 * the reader's own time zone, and its latest runs; Run now, Pause/Resume, Edit and Delete (asked
 * inline first), and a form to create one. The box checks a schedule and its refusal is shown
 * under the form as it says what is wrong. The list follows the gateway's `routines` events
 * (a change made elsewhere, a fire, a run that ends) while the tab is open.
 */
import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import type { ApiClient } from '../api/client.ts';
import { followAgentEvents } from '../api/events.ts';
import type { RoutineChange, RoutineView } from '../api/types.ts';
import { errorText } from './AgentDialog.tsx';
import { ErrorAlert } from '../ErrorAlert.tsx';

/** The reader's time zone (the browser's). */
const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
const localTime = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

const STATUS_LABEL: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  ok: 'Done',
  failed: 'Failed',
  silent: 'Done, nothing to say',
};

/** Follows the `routines` events of `agentId` on a roster-only stream while mounted. */
function useRoutineEvents(client: ApiClient, agentId: string, onChange: () => void): void {
  useEffect(() => {
    const abort = new AbortController();
    void followAgentEvents(
      client,
      null,
      0,
      {
        onEntry: () => undefined,
        onState: () => undefined,
        onRoster: () => undefined,
        onRoutines: (changed) => {
          if (changed === agentId) onChange();
        },
        // A reconnect may have missed events: read the list again.
        onStatus: (status) => {
          if (status === 'open') onChange();
        },
      },
      abort.signal,
    );
    return () => abort.abort();
  }, [client, agentId, onChange]);
}

export function RoutinesTab({
  client,
  agentId,
  onOpenEntry,
}: {
  client: ApiClient;
  agentId: string;
  /** Opens the conversation at the run's turn (its `t<turn>u` message). */
  onOpenEntry: (entryId: string) => void;
}) {
  const [routines, setRoutines] = useState<RoutineView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The form: a new routine, or the one being edited. */
  const [editing, setEditing] = useState<RoutineView | 'new' | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  /**
   * The latest `listRoutines` asked. Events come in bursts (a run's fire, start and end within
   * milliseconds), so reads overlap and may be answered out of order: only the answer to the
   * last one asked is shown, or an earlier "Running" would stay after its run's "Done".
   */
  const asked = useRef(0);
  const load = useCallback(() => {
    const ask = ++asked.current;
    client.listRoutines(agentId).then(
      (list) => {
        if (ask === asked.current) setRoutines(list);
      },
      (cause: unknown) => {
        if (ask === asked.current) setError(errorText(cause));
      },
    );
  }, [client, agentId]);
  useEffect(load, [load]);
  useRoutineEvents(client, agentId, load);

  function act(routine: RoutineView, action: 'run' | 'pause' | 'resume' | 'delete'): void {
    setBusy(routine.id);
    setError(null);
    client
      .updateRoutine(agentId, { id: routine.id, action })
      .then(load, (cause: unknown) => setError(errorText(cause)))
      .finally(() => {
        setBusy(null);
        setConfirming(null);
      });
  }

  return (
    <div data-testid="routines-tab">
      <p className="dialog-note">
        Times are in your time zone, {LOCAL_ZONE}. A routine wakes the agent with its prompt on schedule, even
        when no page is open.
      </p>
      <ErrorAlert message={error} testId="routines-error" />
      {routines === null && !error && <p className="dialog-note">Loading…</p>}
      {routines?.length === 0 && editing === null && (
        <p className="dialog-note" data-testid="routines-empty">
          No routines yet.
        </p>
      )}
      <ul className="routine-list">
        {routines?.map((routine) =>
          editing !== 'new' && editing?.id === routine.id ? (
            <li key={routine.id} className="routine">
              <RoutineForm
                client={client}
                agentId={agentId}
                routine={routine}
                onDone={() => {
                  setEditing(null);
                  load();
                }}
              />
            </li>
          ) : (
            <li key={routine.id} className="routine" data-testid="routine" data-routine-id={routine.id}>
              <div className="routine-head">
                <strong className="routine-name">{routine.name}</strong>
                {routine.paused && (
                  <span className="routine-badge" data-testid="routine-paused">
                    Paused
                  </span>
                )}
              </div>
              <p className="routine-schedule">
                <code>{routine.schedule}</code>
                {!routine.schedule.startsWith('@every') && <> in {routine.timezone}</>}
                {routine.silent && ' · silent'}
              </p>
              <p className="routine-next" data-testid="routine-next">
                {routine.paused
                  ? 'Paused: no next run.'
                  : routine.nextRunAt === null
                    ? 'No next run.'
                    : `Next run: ${localTime.format(routine.nextRunAt)}`}
              </p>
              <p className="routine-prompt">{routine.prompt}</p>
              {routine.runs.length > 0 && (
                <details className="routine-runs">
                  <summary data-testid="routine-runs-summary">
                    Last run: {STATUS_LABEL[routine.runs[0]!.status] ?? routine.runs[0]!.status},{' '}
                    {localTime.format(routine.runs[0]!.instant)} ({routine.runs.length} kept)
                  </summary>
                  <ol>
                    {routine.runs.map((run) => (
                      <li key={run.instant} data-testid="routine-run" data-status={run.status}>
                        {run.entryId === null ? (
                          localTime.format(run.instant)
                        ) : (
                          <a
                            href={`#agent=${encodeURIComponent(agentId)}`}
                            onClick={(event) => {
                              event.preventDefault();
                              onOpenEntry(run.entryId!);
                            }}
                            aria-label={`Open the run of ${localTime.format(run.instant)} in the conversation`}
                            data-testid="routine-run-link"
                            data-entry-id={run.entryId}
                          >
                            {localTime.format(run.instant)}
                          </a>
                        )}
                        : {STATUS_LABEL[run.status] ?? run.status}
                      </li>
                    ))}
                  </ol>
                </details>
              )}
              <div className="routine-actions">
                {confirming === routine.id ? (
                  <span role="group" aria-label={`Delete ${routine.name}?`}>
                    <span>Delete “{routine.name}”?</span>{' '}
                    <button
                      type="button"
                      className="danger"
                      disabled={busy !== null}
                      onClick={() => act(routine, 'delete')}
                      data-testid="routine-delete-confirm"
                    >
                      Delete
                    </button>{' '}
                    <button type="button" onClick={() => setConfirming(null)} autoFocus>
                      Keep
                    </button>
                  </span>
                ) : (
                  <>
                    <button
                      type="button"
                      disabled={busy !== null}
                      onClick={() => act(routine, 'run')}
                      data-testid="routine-run-now"
                    >
                      {busy === routine.id ? 'Working…' : 'Run now'}
                    </button>
                    <button
                      type="button"
                      disabled={busy !== null}
                      onClick={() => act(routine, routine.paused ? 'resume' : 'pause')}
                      data-testid="routine-pause"
                    >
                      {routine.paused ? 'Resume' : 'Pause'}
                    </button>
                    <button
                      type="button"
                      disabled={busy !== null}
                      onClick={() => setEditing(routine)}
                      data-testid="routine-edit"
                    >
                      Edit
                    </button>
                    <button
                      type="button"
                      className="danger"
                      disabled={busy !== null}
                      onClick={() => setConfirming(routine.id)}
                      data-testid="routine-delete"
                    >
                      Delete…
                    </button>
                  </>
                )}
              </div>
            </li>
          ),
        )}
      </ul>
      {editing === 'new' ? (
        <RoutineForm
          client={client}
          agentId={agentId}
          onDone={() => {
            setEditing(null);
            load();
          }}
        />
      ) : (
        <div className="dialog-actions">
          <button
            type="button"
            className="primary"
            onClick={() => setEditing('new')}
            data-testid="routine-new"
          >
            New routine
          </button>
        </div>
      )}
    </div>
  );
}

/** Create a routine, or edit `routine`: only the fields that changed are sent. */
function RoutineForm({
  client,
  agentId,
  routine,
  onDone,
}: {
  client: ApiClient;
  agentId: string;
  routine?: RoutineView;
  onDone: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  function save(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const text = (name: string) => {
      const value = data.get(name);
      return typeof value === 'string' ? value.trim() : '';
    };
    const fields = {
      name: text('name'),
      schedule: text('schedule'),
      timezone: text('timezone'),
      prompt: text('prompt'),
      silent: data.get('silent') === 'on',
    };
    let change: RoutineChange;
    if (!routine) {
      const { timezone, ...rest } = fields;
      change = { action: 'create', ...rest, ...(timezone !== '' ? { timezone } : {}) };
    } else {
      change = { action: 'update', id: routine.id };
      if (fields.name !== routine.name) change.name = fields.name;
      if (fields.schedule !== routine.schedule) change.schedule = fields.schedule;
      if (fields.timezone !== '' && fields.timezone !== routine.timezone) change.timezone = fields.timezone;
      if (fields.prompt !== routine.prompt) change.prompt = fields.prompt;
      if (fields.silent !== routine.silent) change.silent = fields.silent;
    }
    setSaving(true);
    setError(null);
    client
      .updateRoutine(agentId, change)
      .then(onDone, (cause: unknown) => setError(errorText(cause)))
      .finally(() => setSaving(false));
  }

  const errorId = `routine-form-error-${routine?.id ?? 'new'}`;
  return (
    <form
      className="routine-form"
      onSubmit={save}
      aria-label={routine ? `Edit ${routine.name}` : 'New routine'}
      data-testid="routine-form"
    >
      <fieldset disabled={saving}>
        <label>
          Name
          <input
            name="name"
            required
            maxLength={120}
            defaultValue={routine?.name ?? ''}
            data-testid="routine-name"
          />
        </label>
        <label>
          Schedule
          <input
            name="schedule"
            required
            maxLength={200}
            defaultValue={routine?.schedule ?? ''}
            placeholder="0 9 * * 1-5 (09:00 on weekdays), or @every 2h"
            aria-describedby={error ? errorId : undefined}
            aria-invalid={error ? true : undefined}
            data-testid="routine-schedule"
          />
        </label>
        <label>
          Time zone
          <input
            name="timezone"
            maxLength={100}
            defaultValue={routine?.timezone ?? LOCAL_ZONE}
            placeholder="An IANA zone, e.g. Europe/Paris"
            data-testid="routine-timezone"
          />
        </label>
        <label>
          Prompt
          <textarea
            name="prompt"
            required
            rows={3}
            maxLength={20_000}
            defaultValue={routine?.prompt ?? ''}
            placeholder="What the agent is told at each run"
            data-testid="routine-prompt"
          />
        </label>
        <label className="dialog-check">
          <input
            name="silent"
            type="checkbox"
            defaultChecked={routine?.silent ?? false}
            data-testid="routine-silent"
          />
          Silent: a run may end without a message when there is nothing worth saying
        </label>
      </fieldset>
      {error && (
        <p className="error" role="alert" id={errorId} data-testid="routine-form-error">
          {error}
        </p>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={onDone} disabled={saving}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={saving} data-testid="routine-save">
          {saving ? 'Saving…' : routine ? 'Save routine' : 'Create routine'}
        </button>
      </div>
    </form>
  );
}

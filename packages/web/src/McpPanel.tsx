/**
 * Connectors: the MCP servers of the box's mcp.json (docs/mcp-client.md). Each server with its kind,
 * its status (running for how many agents, or the error it failed with), the tools it offered and
 * what is wrong with its entry; add, edit, test and remove; which servers the open agent may use
 * (profile `mcp.servers` through `updateAgent`); Connect for a remote server that needs a sign-in;
 * the switch for the built-in `sessions` server; and the box secrets. The status is read again every few seconds while the panel is open.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ApiClient } from './api/client.ts';
import type { McpServerRow, McpSettingsView } from './api/types.ts';
import { BoxSecrets } from './BoxSecrets.tsx';
import { Dialog } from './Dialog.tsx';
import { McpServerForm } from './McpServerForm.tsx';
import { ConnectStatus, connectLabel, useMcpConnect } from './mcp-connect.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';

const REFRESH_MS = 5000;
const SESSIONS = 'sessions';

const STATUS_TEXT: Readonly<Record<string, string>> = {
  invalid: 'Invalid entry',
  disabled: 'Disabled',
  stopped: 'Not running',
  starting: 'Starting',
  ready: 'Running',
  failed: 'Failed',
};

const KIND_TEXT: Readonly<Record<string, string>> = {
  stdio: 'program',
  http: 'remote',
  builtin: 'built in',
};

function describeError(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * A remote server's sign-in: Connect when the server asked for one (a call or a Test met its 401),
 * as the conversation's card offers it; the tokens are box-wide, so no agent is named.
 */
function SignIn({ client, row }: { client: ApiClient; row: McpServerRow }) {
  const { state, link, error, connect } = useMcpConnect(client, null, row.name);
  if (row.signIn === 'signed-in' && state !== 'busy') {
    return (
      <p className="mcp-sign-in" data-testid="mcp-signed-in">
        Signed in.
      </p>
    );
  }
  if (row.signIn !== 'sign-in-needed') return null;
  return (
    <div className="mcp-sign-in" data-testid="mcp-sign-in">
      <p>{row.name} needs you to sign in before agents can use it.</p>
      {state !== 'connected' && (
        <button
          type="button"
          className="primary"
          disabled={state === 'busy'}
          onClick={connect}
          data-testid="mcp-connect"
        >
          {connectLabel(state, row.name)}
        </button>
      )}
      <ConnectStatus
        state={state}
        link={link}
        after="this panel says when it is signed in."
        connected={`${row.name} is connected.`}
      />
      <ErrorAlert message={error} />
    </div>
  );
}

function ServerRow({
  client,
  row,
  onEdit,
  onRemove,
}: {
  client: ApiClient;
  row: McpServerRow;
  onEdit: () => void;
  onRemove: () => Promise<void>;
}) {
  const [confirming, setConfirming] = useState(false);
  // A server waiting for a sign-in failed for that alone: SignIn says so, in the user's words.
  const signInNeeded = row.signIn === 'sign-in-needed';
  const problem = row.problem ?? (row.status === 'failed' && !signInNeeded ? row.lastError : null);
  return (
    <li className="mcp-server" data-testid="mcp-server" data-name={row.name} data-status={row.status}>
      <div className="mcp-server-head">
        <strong className="mcp-server-name">{row.name}</strong>
        {row.transport && <span className="mcp-kind-tag">{KIND_TEXT[row.transport]}</span>}
        <span className={`mcp-status mcp-status-${row.status}`} data-testid="mcp-status">
          {signInNeeded && row.status === 'failed'
            ? 'Needs sign-in'
            : (STATUS_TEXT[row.status] ?? row.status)}
          {row.status === 'ready' &&
            row.running > 0 &&
            ` for ${row.running} agent${row.running === 1 ? '' : 's'}`}
        </span>
        <span className="mcp-server-actions">
          {row.transport !== 'builtin' && (
            <button type="button" onClick={onEdit} aria-label={`Edit ${row.name}`} data-testid="mcp-edit">
              Edit
            </button>
          )}
          {confirming ? (
            <>
              <button
                type="button"
                className="danger"
                data-testid="mcp-remove-confirm"
                onClick={() => void onRemove().finally(() => setConfirming(false))}
              >
                Remove {row.name}
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep
              </button>
            </>
          ) : (
            <button
              type="button"
              className="danger"
              onClick={() => setConfirming(true)}
              aria-label={`Remove ${row.name}`}
              data-testid="mcp-remove"
            >
              Remove
            </button>
          )}
        </span>
      </div>
      {problem && (
        <p className="error" data-testid="mcp-problem">
          {problem}
        </p>
      )}
      <SignIn client={client} row={row} />
      {row.tools && (
        <details className="mcp-tools-details">
          <summary data-testid="mcp-tools-summary">
            {row.tools.length} tool{row.tools.length === 1 ? '' : 's'}
          </summary>
          <ul className="mcp-tools">
            {row.tools.map((tool) => (
              <li key={tool.name}>
                <code>{tool.name}</code> {tool.description}
              </li>
            ))}
          </ul>
        </details>
      )}
    </li>
  );
}

/** Which servers the open agent may use: all (also later ones), or the ones ticked. */
function AgentServers({
  client,
  agent,
  servers,
}: {
  client: ApiClient;
  agent: { id: string; name: string };
  servers: readonly string[];
}) {
  const [chosen, setChosen] = useState<string[] | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const legendId = useId();

  useEffect(() => {
    client.getAgent(agent.id).then(
      (settings) => setChosen(settings.mcpServers),
      (cause: unknown) => setError(describeError(cause)),
    );
  }, [client, agent.id]);

  /** Clicks may outrun the box: only the answer to the latest change is shown. */
  const latest = useRef(0);
  function save(next: string[] | null): void {
    const before = chosen;
    const mine = ++latest.current;
    setChosen(next);
    setError(null);
    client.updateAgent(agent.id, { mcpServers: next }).then(
      (settings) => {
        if (mine === latest.current) setChosen(settings.mcpServers);
      },
      (cause: unknown) => {
        if (mine !== latest.current) return;
        setChosen(before);
        setError(describeError(cause));
      },
    );
  }

  if (chosen === undefined) return error ? <p className="error">{error}</p> : null;
  return (
    <fieldset className="mcp-agent" aria-labelledby={legendId} data-testid="mcp-agent-servers">
      <legend id={legendId}>Servers {agent.name} may use</legend>
      <label className="dialog-check">
        <input
          type="radio"
          name={`${legendId}-choice`}
          checked={chosen === null}
          onChange={() => save(null)}
          data-testid="mcp-agent-all"
        />
        All of them, also those added later
      </label>
      <label className="dialog-check">
        <input
          type="radio"
          name={`${legendId}-choice`}
          checked={chosen !== null}
          onChange={() => save([...servers])}
          data-testid="mcp-agent-some"
        />
        Only these:
      </label>
      <div className="mcp-agent-list">
        {servers.map((server) => (
          <label key={server} className="dialog-check">
            <input
              type="checkbox"
              disabled={chosen === null}
              checked={chosen === null || chosen.includes(server)}
              onChange={(event) =>
                save(
                  event.target.checked
                    ? [...(chosen ?? []), server]
                    : (chosen ?? []).filter((name) => name !== server),
                )
              }
              data-testid="mcp-agent-server"
              data-name={server}
            />
            {server}
          </label>
        ))}
      </div>
      <ErrorAlert message={error} />
    </fieldset>
  );
}

export function McpPanel({
  client,
  agent,
  onClose,
}: {
  client: ApiClient;
  /** The open agent, whose servers the panel can limit; null when none is open. */
  agent: { id: string; name: string } | null;
  onClose: () => void;
}) {
  const [view, setView] = useState<McpSettingsView | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The server being edited: its name (null: a new one), or none. */
  const [editing, setEditing] = useState<{ name: string | null; entry: unknown } | null>(null);

  const load = useCallback(() => {
    client.getMcpSettings().then(
      (next) => {
        setView(next);
        setError(null);
      },
      (cause: unknown) => setError(describeError(cause)),
    );
  }, [client]);

  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  function change(action: () => Promise<McpSettingsView>): Promise<void> {
    setError(null);
    return action().then(setView, (cause: unknown) => setError(describeError(cause)));
  }

  const names = (view?.servers ?? []).filter((row) => row.problem === null).map((row) => row.name);
  return (
    <Dialog title="Connectors (MCP servers)" onClose={onClose} testId="mcp-panel" wide>
      <p className="dialog-note">
        Tools from MCP servers for every agent. A program runs confined, one copy per agent; a remote server
        may ask you to connect it. Saved in <code>{view?.file ?? 'mcp.json'}</code>.
      </p>
      {view && view.problems.length > 0 && (
        <div className="banner error" role="alert" data-testid="mcp-problems">
          <strong>Parts of mcp.json are not used:</strong>
          <ul>
            {view.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </div>
      )}
      <ErrorAlert message={error} testId="mcp-error" />
      {view === null && !error && <p className="dialog-note">Loading…</p>}
      {editing ? (
        <McpServerForm
          client={client}
          name={editing.name}
          entry={editing.entry}
          onCancel={() => setEditing(null)}
          onSaved={(next) => {
            setView(next);
            setEditing(null);
          }}
        />
      ) : (
        view && (
          <>
            {view.servers.length === 0 ? (
              <p className="dialog-note" data-testid="mcp-empty">
                No servers yet. Add one, or paste a server&apos;s block from its README into mcp.json.
              </p>
            ) : (
              <ul className="mcp-servers" aria-label="MCP servers">
                {view.servers.map((row) => (
                  <ServerRow
                    key={row.name}
                    client={client}
                    row={row}
                    onEdit={() => setEditing({ name: row.name, entry: row.entry })}
                    onRemove={() => change(() => client.removeMcpServer(row.name))}
                  />
                ))}
              </ul>
            )}
            <div className="dialog-actions mcp-add">
              <button
                type="button"
                onClick={() => setEditing({ name: null, entry: undefined })}
                data-testid="mcp-add"
              >
                Add a server
              </button>
            </div>
            <label className="dialog-check">
              <input
                type="checkbox"
                checked={view.sessions}
                onChange={(event) => {
                  const enabled = event.target.checked;
                  // Shown at once; the box's answer (or, on an error, a fresh read) settles it.
                  setView({ ...view, sessions: enabled });
                  void change(() => client.setMcpSessions(enabled)).then(load);
                }}
                data-testid="mcp-sessions"
              />
              <span>
                Past sessions: agents may search and read your transcripts (Claude Code, Codex, sendbox…),
                read-only, as the server <code>{SESSIONS}</code>
              </span>
            </label>
            {agent && names.length > 0 && <AgentServers client={client} agent={agent} servers={names} />}
          </>
        )
      )}
      <BoxSecrets client={client} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}

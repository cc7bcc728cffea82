/**
 * Adds or edits one MCP server of mcp.json (docs/mcp-client.md): a local program (stdio: command,
 * arguments, environment, the hosts it may reach, read-only folders) or a remote server (HTTP: URL,
 * headers, transport, a server on this machine or the LAN), plus a description, whether its calls
 * ask first, a timeout and a switch to disable it. "Test" starts the entry as typed, unsaved, and
 * lists its tools or says what failed; "Save" writes mcp.json (the box checks the entry and names
 * the field that is wrong). Secrets are never typed here: `${secret:NAME}` refers to a box secret.
 */
import { useId, useState, type FormEvent } from 'react';
import type { ApiClient } from './api/client.ts';
import type { McpServerCheck, McpSettingsView } from './api/types.ts';
import { entryOf, FormProblem, formOf, type ServerForm, type ServerKind } from './mcp-entry.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

export function McpServerForm({
  client,
  name,
  entry,
  onSaved,
  onCancel,
}: {
  client: ApiClient;
  /** The server's name in mcp.json; null for a new one. */
  name: string | null;
  /** The entry as mcp.json holds it (undefined for a new one). */
  entry: unknown;
  onSaved: (view: McpSettingsView) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState<ServerForm>(() => formOf(name ?? '', entry ?? { command: '' }));
  const [busy, setBusy] = useState<'save' | 'test' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [check, setCheck] = useState<McpServerCheck | null>(null);
  const ids = useId();
  const field = <K extends keyof ServerForm>(key: K, value: ServerForm[K]) =>
    setForm((current) => ({ ...current, [key]: value }));

  /** The entry as typed, or null (the problem shown) when a line cannot be read. */
  function built(): Record<string, unknown> | null {
    try {
      return entryOf(form, entry);
    } catch (cause) {
      if (cause instanceof FormProblem) {
        setError(cause.message);
        return null;
      }
      throw cause;
    }
  }

  function run(kind: 'save' | 'test', action: (server: Record<string, unknown>) => Promise<void>): void {
    setError(null);
    setCheck(null);
    const server = built();
    if (!server) return;
    setBusy(kind);
    action(server)
      .catch((cause: unknown) => setError(cause instanceof Error ? cause.message : String(cause)))
      .finally(() => setBusy(null));
  }

  function save(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    run('save', async (server) => {
      const view = await client.setMcpServer({
        name: form.name.trim(),
        server,
        ...(name !== null && name !== form.name.trim() ? { previousName: name } : {}),
      });
      onSaved(view);
    });
  }

  const kindName = `${ids}-kind`;
  return (
    <form className="mcp-form" onSubmit={save} data-testid="mcp-server-form" aria-label="MCP server">
      <fieldset disabled={busy !== null}>
        <label>
          Name
          <input
            required
            pattern="[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}"
            title="Letters, digits, _, . or -"
            value={form.name}
            onChange={(event) => field('name', event.target.value)}
            placeholder="github"
            autoComplete="off"
            data-testid="mcp-name"
          />
        </label>
        <fieldset className="mcp-kind">
          <legend>Kind</legend>
          {(
            [
              ['stdio', 'A program on this machine (stdio)'],
              ['http', 'A remote server (HTTP)'],
            ] as Array<[ServerKind, string]>
          ).map(([kind, label]) => (
            <label key={kind} className="dialog-check">
              <input
                type="radio"
                name={kindName}
                checked={form.kind === kind}
                onChange={() => field('kind', kind)}
                data-testid={`mcp-kind-${kind}`}
              />
              {label}
            </label>
          ))}
        </fieldset>
        {form.kind === 'stdio' ? (
          <>
            <label>
              Command
              <input
                required
                value={form.command}
                onChange={(event) => field('command', event.target.value)}
                placeholder="npx"
                autoComplete="off"
                data-testid="mcp-command"
              />
            </label>
            <label>
              Arguments (one per line)
              <textarea
                rows={3}
                value={form.args}
                onChange={(event) => field('args', event.target.value)}
                placeholder={'-y\n@modelcontextprotocol/server-github'}
                data-testid="mcp-args"
              />
            </label>
            <label>
              Environment (NAME=value per line; write {'${secret:NAME}'} for a box secret)
              <textarea
                rows={2}
                value={form.env}
                onChange={(event) => field('env', event.target.value)}
                placeholder="GITHUB_PERSONAL_ACCESS_TOKEN=${secret:GITHUB_TOKEN}"
                spellCheck={false}
                data-testid="mcp-env"
              />
            </label>
            <label>
              Hosts it may reach (none: no network; registry.npmjs.org to install with npx)
              <textarea
                rows={2}
                value={form.allowDomains}
                onChange={(event) => field('allowDomains', event.target.value)}
                placeholder="registry.npmjs.org api.github.com"
                data-testid="mcp-allow-domains"
              />
            </label>
            <label>
              Read-only folders it needs (absolute paths, one per line)
              <textarea
                rows={2}
                value={form.readOnly}
                onChange={(event) => field('readOnly', event.target.value)}
                placeholder="/srv/mcp/weather"
                data-testid="mcp-read-only"
              />
            </label>
          </>
        ) : (
          <>
            <label>
              URL
              <input
                required
                type="url"
                value={form.url}
                onChange={(event) => field('url', event.target.value)}
                placeholder="https://mcp.example.com/mcp"
                autoComplete="off"
                data-testid="mcp-url"
              />
            </label>
            <label>
              Headers (Name: value per line; write {'${secret:NAME}'} for a box secret)
              <textarea
                rows={2}
                value={form.headers}
                onChange={(event) => field('headers', event.target.value)}
                placeholder="Authorization: Bearer ${secret:LINEAR}"
                spellCheck={false}
                data-testid="mcp-headers"
              />
            </label>
            <label>
              Transport
              <select
                value={form.transport}
                onChange={(event) => field('transport', event.target.value as ServerForm['transport'])}
              >
                <option value="">Streamable HTTP, falling back to SSE</option>
                <option value="streamable-http">Streamable HTTP only</option>
                <option value="sse">SSE only (older servers)</option>
              </select>
            </label>
            <label className="dialog-check">
              <input
                type="checkbox"
                checked={form.allowPrivateHost}
                onChange={(event) => field('allowPrivateHost', event.target.checked)}
                data-testid="mcp-allow-private-host"
              />
              It runs on this machine or the local network (let the box reach its host)
            </label>
          </>
        )}
        <label>
          Description (optional, one line the agents see)
          <input
            value={form.description}
            onChange={(event) => field('description', event.target.value)}
            data-testid="mcp-description"
          />
        </label>
        <label>
          Before a tool runs
          <select
            value={form.approval}
            onChange={(event) => field('approval', event.target.value as ServerForm['approval'])}
            data-testid="mcp-approval"
          >
            <option value="auto">Run it</option>
            <option value="ask">Ask me every time</option>
            <option value="per-tool">Per tool</option>
          </select>
        </label>
        {form.approval === 'per-tool' && (
          <label>
            Per tool (tool = ask or auto per line; * for every other tool)
            <textarea
              rows={2}
              value={form.approvalRules}
              onChange={(event) => field('approvalRules', event.target.value)}
              placeholder={'* = auto\ncreate_issue = ask'}
              data-testid="mcp-approval-rules"
            />
          </label>
        )}
        <label>
          Timeout of a call, in seconds (empty: 60)
          <input
            inputMode="decimal"
            value={form.timeoutSeconds}
            onChange={(event) => field('timeoutSeconds', event.target.value)}
            data-testid="mcp-timeout"
          />
        </label>
        <label className="dialog-check">
          <input
            type="checkbox"
            checked={form.disabled}
            onChange={(event) => field('disabled', event.target.checked)}
            data-testid="mcp-disabled"
          />
          Disabled (kept in mcp.json, offered to no agent)
        </label>
      </fieldset>
      {check && (
        <div className={check.ok ? 'dialog-note' : 'error'} role="status" data-testid="mcp-check">
          <p>{check.message}</p>
          {check.ok && check.tools.length > 0 && (
            <ul className="mcp-tools">
              {check.tools.map((tool) => (
                <li key={tool.name}>
                  <code>{tool.name}</code> {tool.description}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {busy === 'test' && (
        <p className="dialog-note" role="status">
          Starting the server…
        </p>
      )}
      <ErrorAlert message={error} testId="mcp-form-error" />
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          disabled={busy !== null}
          data-testid="mcp-test"
          onClick={(event) => {
            if (!event.currentTarget.form?.reportValidity()) return;
            run('test', async (server) =>
              setCheck(await client.testMcpServer({ name: form.name.trim(), server })),
            );
          }}
        >
          Test
        </button>
        <button type="submit" className="primary" disabled={busy !== null} data-testid="mcp-save">
          {busy === 'save' ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}

/**
 * The agent's settings (`getAgent`, `updateAgent`): name, description, standing instructions
 * (joined to its system prompt), the model id of the configured provider for this agent alone,
 * whether it may fetch web pages, and the domains its sandbox may reach. Only the fields that changed are sent; the box checks
 * them and a refusal is shown as it says what is wrong.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { ApiClient } from '../api/client.ts';
import type { AgentSettings, AgentUpdate } from '../api/types.ts';
import { errorText } from './AgentDialog.tsx';
import { ErrorAlert } from '../ErrorAlert.tsx';

export function SettingsTab({
  client,
  agentId,
  onSaved,
}: {
  client: ApiClient;
  agentId: string;
  onSaved: () => void;
}) {
  const [settings, setSettings] = useState<AgentSettings | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    client.getAgent(agentId).then(setSettings, (cause: unknown) => setError(errorText(cause)));
  }, [client, agentId]);

  function save(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    if (!settings) return;
    const data = new FormData(event.currentTarget);
    const text = (name: string) => {
      const value = data.get(name);
      return typeof value === 'string' ? value : '';
    };
    const domains = text('allowDomains')
      .split(/[\s,]+/)
      .filter((domain) => domain !== '');
    const update: AgentUpdate = {};
    if (text('name').trim() !== settings.name) update.name = text('name').trim();
    if (text('description') !== settings.description) update.description = text('description');
    if (text('instructions') !== settings.instructions) update.instructions = text('instructions');
    if (domains.join('\n') !== settings.allowDomains.join('\n')) update.allowDomains = domains;
    const model = text('model').trim();
    if ((data.get('webFetch') === 'on') !== settings.webFetch)
      update.webFetch = data.get('webFetch') === 'on';
    if (settings.provider !== null && model !== (settings.model ?? ''))
      update.model = model === '' ? null : model;
    setSaving(true);
    setError(null);
    setSaved(false);
    client
      .updateAgent(agentId, update)
      .then(
        (next) => {
          setSettings(next);
          setSaved(true);
          onSaved();
        },
        (cause: unknown) => setError(errorText(cause)),
      )
      .finally(() => setSaving(false));
  }

  if (!settings)
    return error ? (
      <p className="error" role="alert">
        {error}
      </p>
    ) : (
      <p className="dialog-note">Loading…</p>
    );
  return (
    <form onSubmit={save} onChange={() => setSaved(false)} data-testid="agent-settings-form">
      <fieldset disabled={saving}>
        <label>
          Name
          <input name="name" defaultValue={settings.name} required maxLength={200} data-testid="agent-name" />
        </label>
        <label>
          Description
          <textarea
            name="description"
            defaultValue={settings.description}
            rows={2}
            maxLength={4000}
            data-testid="agent-description"
          />
        </label>
        <label>
          Instructions
          <textarea
            name="instructions"
            defaultValue={settings.instructions}
            rows={6}
            placeholder="Standing instructions, added to the agent's system prompt"
            data-testid="agent-instructions"
          />
        </label>
        <label>
          Model
          <input
            name="model"
            defaultValue={settings.model ?? ''}
            disabled={settings.provider === null}
            placeholder={
              settings.provider === null
                ? 'No model is set up (Model in the toolbar)'
                : `${settings.defaultModel ?? 'the default'} (the box's model)`
            }
            data-testid="agent-model"
          />
        </label>
        <p className="dialog-note">
          {settings.provider === null
            ? 'Set up a model first; then this agent can use another model id of the same provider.'
            : `A model id of ${settings.provider} for this agent alone; leave empty for the box's model.`}
          {settings.model !== null && !settings.modelApplies && (
            <strong> It was picked for another provider, so the box&apos;s model is used now.</strong>
          )}
        </p>
        <label className="dialog-check">
          <input
            name="webFetch"
            type="checkbox"
            defaultChecked={settings.webFetch}
            data-testid="agent-web-fetch"
          />
          Web pages: the agent may read a web page by its address (web_fetch)
        </label>
        <label>
          Web domains its tools may reach
          <textarea
            name="allowDomains"
            defaultValue={settings.allowDomains.join('\n')}
            rows={3}
            placeholder={'example.com\n*.example.org'}
            data-testid="agent-domains"
          />
        </label>
        <p className="dialog-note">
          One per line: example.com (its subdomains too), *.example.com, or * for every public host. Empty: no
          network.
        </p>
      </fieldset>
      <ErrorAlert message={error} testId="agent-settings-error" />
      {saved && (
        <p className="dialog-saved" role="status" data-testid="agent-settings-saved">
          Saved: the agent uses these from its next turn.
        </p>
      )}
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={saving} data-testid="agent-settings-save">
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
    </form>
  );
}

/**
 * The model settings dialog: provider (xAI or OpenAI-compatible), base URL, model and key,
 * saved in the box and applied at once. The key field is write-only: the box says whether a
 * key is saved, never which; leaving it blank keeps it, as long as the provider and base URL
 * stay (the box drops a key whose endpoint changed, and the form says so before Save). Environment
 * variables win: the box then reports the settings as locked and the form says so. The vision
 * switch says whether the model is shown images (off: a text-only model gets a note instead); the
 * streaming switch whether the endpoint is asked to stream (an endpoint that cannot is found on its
 * first failure anyway). "Test connection" makes one small call with the form as it stands,
 * unsaved, and says what is wrong. A last line says which web search the agents have, or how to
 * turn it on.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { ApiClient, ModelSettingsInput } from './api/client.ts';
import type { ModelSettings } from './api/types.ts';
import { Dialog } from './Dialog.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';

type Provider = 'xai' | 'openai-compatible';

export function SettingsPanel({
  client,
  onClose,
  onSaved,
}: {
  client: ApiClient;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [settings, setSettings] = useState<ModelSettings | null>(null);
  const [provider, setProvider] = useState<Provider>('xai');
  /** The base URL as typed, to tell whether the saved key's endpoint is being changed. */
  const [baseURL, setBaseURL] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const [check, setCheck] = useState<{ ok: boolean; message: string } | 'running' | null>(null);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    client.getModelSettings().then(
      (loaded) => {
        setSettings(loaded);
        setBaseURL(loaded.baseURL);
        if (loaded.provider) setProvider(loaded.provider);
      },
      (cause: unknown) => setError(cause instanceof Error ? cause.message : String(cause)),
    );
  }, [client]);

  /** The form as the box takes it (the key only when typed: blank keeps the saved one). */
  function formInput(element: HTMLFormElement): ModelSettingsInput {
    const data = new FormData(element);
    const field = (name: string): string => {
      const value = data.get(name);
      return typeof value === 'string' ? value : '';
    };
    const text = (name: string) => field(name).trim();
    const apiKey = field('apiKey');
    return {
      provider,
      model: text('model'),
      ...(provider === 'openai-compatible' ? { baseURL: text('baseURL') } : {}),
      ...(apiKey !== '' ? { apiKey } : {}),
      ...(settings?.visionLockedByEnvironment ? {} : { vision: data.get('vision') === 'on' }),
      ...(settings?.streamLockedByEnvironment ? {} : { stream: data.get('stream') === 'on' }),
      ...(settings?.contextTokensSource === 'environment'
        ? {}
        : { contextTokens: text('contextTokens') === '' ? null : Number(text('contextTokens')) }),
    };
  }

  function testConnection(): void {
    if (!form.current) return;
    if (!locked && !form.current.reportValidity()) return;
    setCheck('running');
    client.testModelSettings(formInput(form.current)).then(
      (answer) => setCheck({ ok: answer.ok, message: answer.message }),
      (cause: unknown) =>
        setCheck({ ok: false, message: cause instanceof Error ? cause.message : String(cause) }),
    );
  }

  function save(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    const input = formInput(event.currentTarget);
    setSaving(true);
    setError(null);
    setSaved(false);
    client
      .setModelSettings(input)
      .then(
        (next) => {
          setSettings(next);
          setSaved(true);
          onSaved();
        },
        (cause: unknown) => setError(cause instanceof Error ? cause.message : String(cause)),
      )
      .finally(() => setSaving(false));
  }

  const locked = settings?.lockedByEnvironment ?? false;
  // Mirrors the box's rule (host/model-settings.ts, sameEndpointAs): the key stays with its endpoint.
  const keyLeavesWithEndpoint =
    settings !== null &&
    settings.hasKey &&
    (provider !== settings.provider ||
      (provider === 'openai-compatible' && endpointOf(baseURL) !== endpointOf(settings.baseURL)));
  return (
    <Dialog title="Model settings" onClose={onClose} testId="settings-panel">
      {locked && (
        <p className="dialog-note" data-testid="settings-locked">
          The model is set by environment variables, which win over these settings. Unset them and restart
          sendbox to choose the model here.
        </p>
      )}
      {settings === null && !error && <p className="dialog-note">Loading…</p>}
      {settings && (
        <form ref={form} onSubmit={save}>
          <fieldset disabled={locked || saving}>
            <label>
              Provider
              <select
                name="provider"
                value={provider}
                onChange={(event) => setProvider(event.target.value as Provider)}
                data-testid="settings-provider"
              >
                <option value="xai">xAI</option>
                <option value="openai-compatible">
                  OpenAI-compatible (llama.cpp, Ollama, vLLM, OpenRouter…)
                </option>
              </select>
            </label>
            {provider === 'openai-compatible' && (
              <label>
                Base URL
                <input
                  name="baseURL"
                  type="url"
                  required
                  defaultValue={settings.baseURL}
                  onChange={(event) => setBaseURL(event.target.value)}
                  placeholder="http://127.0.0.1:11434/v1"
                  data-testid="settings-base-url"
                />
              </label>
            )}
            <label>
              Model
              <input
                name="model"
                defaultValue={settings.model}
                required={provider === 'openai-compatible'}
                placeholder={provider === 'xai' ? 'grok-4.7 (default)' : 'the model id, e.g. llama3.1'}
                data-testid="settings-model"
              />
            </label>
            <label>
              API key
              <input
                name="apiKey"
                type="password"
                autoComplete="off"
                placeholder={
                  keyLeavesWithEndpoint
                    ? 'The key for this endpoint'
                    : settings.hasKey
                      ? 'A key is saved; type to replace it'
                      : provider === 'xai'
                        ? 'Required'
                        : 'Optional'
                }
                data-testid="settings-key"
              />
            </label>
            {keyLeavesWithEndpoint && (
              <p className="dialog-note warning" role="status" data-testid="settings-key-cleared">
                The saved key belongs to the{' '}
                {provider === settings.provider ? 'old base URL' : 'old provider'}: saving removes it, so it
                is never sent to this endpoint. Enter this endpoint&apos;s key, or leave the field empty if it
                needs none.
              </p>
            )}
            <p className="dialog-note">
              The key is stored in the box&apos;s data folder (readable by you only) and never shown again. It
              stays with its provider and base URL: changing either removes it unless you enter a new one.
            </p>
            <label className="dialog-check">
              <input
                name="vision"
                type="checkbox"
                defaultChecked={settings.vision}
                disabled={settings.visionLockedByEnvironment}
                data-testid="settings-vision"
              />
              Vision: the model can see images (turn off for a text-only model)
            </label>
            {settings.visionLockedByEnvironment && (
              <p className="dialog-note">Set by SENDBOX_MODEL_VISION in the environment.</p>
            )}
            <label className="dialog-check">
              <input
                name="stream"
                type="checkbox"
                defaultChecked={settings.stream}
                disabled={settings.streamLockedByEnvironment}
                data-testid="settings-stream"
              />
              Streaming: show replies as they are written (turn off for an endpoint that cannot stream;
              sendbox also finds one on its first failure)
            </label>
            {settings.streamLockedByEnvironment && (
              <p className="dialog-note">Set by SENDBOX_MODEL_STREAM in the environment.</p>
            )}
            <label>
              Context window (tokens)
              <input
                name="contextTokens"
                type="number"
                min={2048}
                step={1}
                inputMode="numeric"
                defaultValue={settings.contextTokensSetting ?? ''}
                disabled={settings.contextTokensSource === 'environment'}
                placeholder={
                  settings.contextTokens === undefined
                    ? 'From the table of known models'
                    : `${settings.contextTokens} (${settings.contextTokensSource ?? 'default'})`
                }
                data-testid="settings-context-tokens"
              />
            </label>
            <p className="dialog-note">
              {settings.contextTokensSource === 'environment'
                ? 'Set by SENDBOX_MODEL_CONTEXT_TOKENS in the environment.'
                : 'Past 80 % of it, old tool outputs are pruned from what the model reads and older turns are summarised; the transcript keeps everything. Leave empty to use the known window of the model.'}
            </p>
          </fieldset>
          {check !== null && (
            <p
              className={check !== 'running' && !check.ok ? 'error' : 'dialog-note'}
              role="status"
              data-testid="settings-check"
            >
              {check === 'running' ? 'Testing the connection…' : check.message}
            </p>
          )}
          {settings.webSearch && (
            <p className="dialog-note" data-testid="settings-web-search">
              {settings.webSearch.backend
                ? `Web search: ${settings.webSearch.backend}.`
                : settings.webSearch.howToEnable}
            </p>
          )}
          <ErrorAlert message={error} />
          {saved && (
            <p className="dialog-saved" role="status" data-testid="settings-saved">
              Saved: agents use this model from their next turn.
            </p>
          )}
          <div className="dialog-actions">
            <button
              type="button"
              onClick={testConnection}
              disabled={saving || check === 'running'}
              data-testid="settings-test"
            >
              Test connection
            </button>
            <button type="submit" className="primary" disabled={locked || saving} data-testid="settings-save">
              {saving ? 'Saving…' : 'Save'}
            </button>
          </div>
        </form>
      )}
      {!settings && error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}

/** A base URL as the box compares it: parsed, without trailing slashes. */
function endpointOf(baseURL: string): string {
  const text = baseURL.trim();
  try {
    return new URL(text).href.replace(/\/+$/, '');
  } catch {
    return text;
  }
}

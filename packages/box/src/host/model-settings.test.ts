import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startOpenAiTestServer } from '../testing/openai-server.ts';
import { MODEL_SETTINGS_FILE, ModelSettings } from './model-settings.ts';
import { createAgentHost } from './agent-host.ts';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-settings-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('ModelSettings', () => {
  it('keeps the vision switch: the panel may set a model text-only, SENDBOX_MODEL_VISION wins', async () => {
    const settings = new ModelSettings(dataDir, {});
    expect(settings.view()).toMatchObject({ vision: true, visionLockedByEnvironment: false });
    const base = { provider: 'openai-compatible' as const, baseURL: 'http://127.0.0.1:9/v1', model: 'local' };
    await settings.update({ ...base, vision: false });
    const again = new ModelSettings(dataDir, {});
    await again.load();
    expect(again.vision()).toBe(false);
    // Omitted keeps it; true turns it back on.
    await again.update(base);
    expect(again.vision()).toBe(false);
    await again.update({ ...base, vision: true });
    expect(again.vision()).toBe(true);

    const locked = new ModelSettings(dataDir, { SENDBOX_MODEL_VISION: '0' });
    await locked.load();
    expect(locked.view()).toMatchObject({ vision: false, visionLockedByEnvironment: true });
    expect(() => new ModelSettings(dataDir, { SENDBOX_MODEL_VISION: 'maybe' })).toThrow(
      /SENDBOX_MODEL_VISION=maybe is not understood: set 0 for a text-only model/,
    );
  });

  it('keeps the context window: the panel field, SENDBOX_MODEL_CONTEXT_TOKENS wins, the table otherwise', async () => {
    const settings = new ModelSettings(dataDir, {});
    expect(settings.view('grok-4')).toMatchObject({
      contextTokens: 256_000,
      contextTokensSource: 'known model',
      contextTokensSetting: null,
    });
    expect(settings.view('my-local-model')).toMatchObject({
      contextTokens: 32_768,
      contextTokensSource: 'default',
    });
    const base = { provider: 'openai-compatible' as const, baseURL: 'http://127.0.0.1:9/v1', model: 'local' };
    await settings.update({ ...base, contextTokens: 16_000 });
    const again = new ModelSettings(dataDir, {});
    await again.load();
    expect(again.contextWindow('grok-4')).toEqual({ tokens: 16_000, source: 'settings' });
    // Omitted keeps it; null goes back to the table.
    await again.update(base);
    expect(again.contextWindow('grok-4').tokens).toBe(16_000);
    await again.update({ ...base, contextTokens: null });
    expect(again.contextWindow('grok-4')).toEqual({ tokens: 256_000, source: 'known model' });

    const fromEnv = new ModelSettings(dataDir, { SENDBOX_MODEL_CONTEXT_TOKENS: '8000' });
    expect(fromEnv.contextWindow('grok-4')).toEqual({ tokens: 8_000, source: 'environment' });
    expect(() => new ModelSettings(dataDir, { SENDBOX_MODEL_CONTEXT_TOKENS: 'lots' })).toThrow(
      /SENDBOX_MODEL_CONTEXT_TOKENS must be a whole number of tokens, at least 2048 \(got "lots"\)/,
    );
  });

  it('saves the key 0600 in the data dir and never shows it back', async () => {
    const settings = new ModelSettings(dataDir, {});
    const chosen = await settings.update({
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:9/v1',
      model: 'local',
      apiKey: 'sk-panel-secret',
    });
    expect(chosen.status).toMatchObject({ configured: true, provider: 'openai-compatible', model: 'local' });
    const file = path.join(dataDir, MODEL_SETTINGS_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain('sk-panel-secret');
    expect(JSON.stringify(settings.view())).not.toContain('sk-panel-secret');
    expect(settings.view()).toMatchObject({ hasKey: true, lockedByEnvironment: false });
    // Omitting the key keeps it; a fresh instance reads the file back.
    await settings.update({
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:9/v1',
      model: 'other',
    });
    const again = new ModelSettings(dataDir, {});
    await again.load();
    expect(again.view()).toMatchObject({ model: 'other', hasKey: true });
    expect(again.choose().status.model).toBe('other');
  });

  it('drops the saved key when the provider or base URL changes without a new key', async () => {
    const settings = new ModelSettings(dataDir, {});
    const saved = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' } as const;
    await settings.update({ ...saved, apiKey: 'sk-for-nine' });
    // The same endpoint, written another way, keeps it.
    await settings.update({ ...saved, baseURL: 'http://127.0.0.1:9/v1/' });
    expect(settings.view().hasKey).toBe(true);
    await settings.update({ ...saved, baseURL: 'http://127.0.0.1:10/v1' });
    expect(settings.view().hasKey).toBe(false);
    expect(await readFile(path.join(dataDir, MODEL_SETTINGS_FILE), 'utf8')).not.toContain('sk-for-nine');
    // Back to the first URL: the old key is gone for good.
    await settings.update(saved);
    expect(settings.view().hasKey).toBe(false);
    // A new key given with the change is saved with it; a provider change drops it.
    await settings.update({ ...saved, apiKey: 'sk-new' });
    await expect(settings.update({ provider: 'xai' })).rejects.toThrow(/xAI needs an API key/);
    expect(settings.view()).toMatchObject({ provider: 'openai-compatible', hasKey: true });
    await settings.update({ provider: 'xai', apiKey: 'xai-key' });
    await settings.update({ ...saved });
    expect(settings.view().hasKey).toBe(false);
  });

  it('never sends the saved key to a new base URL (two real endpoints)', async () => {
    const first = await startOpenAiTestServer();
    const second = await startOpenAiTestServer();
    const host = await createAgentHost({ dataDir, env: {} });
    try {
      for (const server of [first, second]) {
        server.respondWith(() => ({ kind: 'message', content: 'thinking only' }));
      }
      const { id } = await host.createAgent({ name: 'Key follows endpoint' });
      const turn = async (n: number) => {
        await host.sendPrompt({ agentId: id, prompt: `p${n}`, clientNonce: `n${n}` });
        await vi.waitFor(async () => expect((await host.entryById(id, `t${n}e`))?.kind).toBe('turn-ended'), {
          timeout: 20_000,
        });
      };
      await host.updateModelSettings({
        provider: 'openai-compatible',
        baseURL: first.baseURL,
        model: 'local',
        apiKey: 'sk-first-endpoint',
      });
      await turn(0);
      expect(first.requests.at(-1)!.headers.authorization).toBe('Bearer sk-first-endpoint');
      // The panel changes only the URL; the key field stays empty.
      await host.updateModelSettings({
        provider: 'openai-compatible',
        baseURL: second.baseURL,
        model: 'local',
      });
      await turn(1);
      expect(second.requests.length).toBeGreaterThan(0);
      for (const request of second.requests) {
        expect(JSON.stringify(request.headers)).not.toContain('sk-first-endpoint');
      }
    } finally {
      await host.close();
      await first.close();
      await second.close();
    }
  });

  it('lets the environment win, and refuses settings that configure no model', async () => {
    const locked = new ModelSettings(dataDir, { XAI_API_KEY: 'env-key' });
    expect(locked.view().lockedByEnvironment).toBe(true);
    await expect(locked.update({ provider: 'xai', apiKey: 'k' })).rejects.toThrow(/environment variables/);
    const settings = new ModelSettings(dataDir, {});
    await expect(settings.update({ provider: 'openai-compatible', model: 'm' })).rejects.toThrow(
      /needs a base URL/,
    );
    await expect(
      settings.update({ provider: 'openai-compatible', baseURL: 'file:///etc', model: 'm' }),
    ).rejects.toThrow(/http or https/);
  });

  it('applies to a running host without a restart', async () => {
    const host = await createAgentHost({ dataDir, env: {} });
    try {
      expect(host.modelStatus().configured).toBe(false);
      await host.updateModelSettings({ provider: 'xai', apiKey: 'xai-panel-key', model: 'grok-test' });
      expect(host.modelStatus()).toMatchObject({ configured: true, provider: 'xai', model: 'grok-test' });
      const agent = await host.createAgent({ name: 'After settings' });
      expect(agent.readOnly).toBe(false);
    } finally {
      await host.close();
    }
  });

  it('applies every SENDBOX_MODEL_* variable to a panel-set model (streaming, timeout, retries)', async () => {
    const server = await startOpenAiTestServer();
    try {
      server.respondWith(() => ({ kind: 'message', content: 'ok' }));
      const input = { provider: 'openai-compatible' as const, baseURL: server.baseURL, model: 'm' };
      const env = {
        SENDBOX_MODEL_STREAM: '0',
        SENDBOX_MODEL_TIMEOUT_MS: '777',
        SENDBOX_MODEL_MAX_RETRIES: '0',
      };
      const settings = new ModelSettings(dataDir, env, () => undefined);
      await settings.update(input);
      // The environment still leaves the panel free (no model of its own), but its switch is locked.
      expect(settings.view()).toMatchObject({
        lockedByEnvironment: false,
        stream: false,
        streamLockedByEnvironment: true,
      });
      const step = {
        system: 's',
        messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
        tools: [],
        onSendDraft: () => undefined,
      };
      await settings.choose().provider!.step(step);
      expect(server.requests.at(-1)?.body.stream).not.toBe(true);
      // The panel's own switch, without the variable: off sends no stream request either.
      const panelOnly = new ModelSettings(dataDir, {}, () => undefined);
      await panelOnly.update({ ...input, stream: false });
      expect(panelOnly.view()).toMatchObject({ stream: false, streamLockedByEnvironment: false });
      await panelOnly.choose().provider!.step(step);
      expect(server.requests.at(-1)?.body.stream).not.toBe(true);
      await panelOnly.update({ ...input, stream: true });
      await panelOnly.choose().provider!.step(step);
      expect(server.requests.at(-1)?.body.stream).toBe(true);
      // The idle timeout of the variable: a hanging endpoint fails after 777 ms, not the default 120 s.
      server.reply({ kind: 'hang' });
      await expect(settings.choose().provider!.step(step)).rejects.toThrow(/777 ms, the idle timeout/);
    } finally {
      await server.close();
    }
  });

  it('shows, when locked, the model the environment configures (not the saved one)', async () => {
    const saved = new ModelSettings(dataDir, {});
    await saved.update({ provider: 'xai', apiKey: 'panel-key', model: 'grok-panel' });
    const locked = new ModelSettings(dataDir, {
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      SENDBOX_MODEL: 'env-model',
    });
    await locked.load();
    expect(locked.view()).toMatchObject({
      lockedByEnvironment: true,
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:9/v1',
      model: 'env-model',
      hasKey: false,
    });
  });
});

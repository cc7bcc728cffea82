import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
});

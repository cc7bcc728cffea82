/**
 * The model settings panel (docs/gateway.md): `getModelSettings` returns the provider, base
 * URL and model, and whether a key is saved (never the key); `setModelSettings` saves and
 * applies them. The key travels in this request body only; the gateway never logs bodies.
 */
import { z } from 'zod';
import { modelSettingsInputSchema } from '../host/model-settings.ts';
import { method } from './method-spec.ts';

export const settingsMethods = {
  getModelSettings: method(z.object({}), ({ host }) => Promise.resolve(host.modelSettings())),
  setModelSettings: method(modelSettingsInputSchema, ({ host }, input) => host.updateModelSettings(input)),
  /** One small call with the form's (unsaved) settings: `{ok, message, streams, elapsedMs}`. */
  testModelSettings: method(modelSettingsInputSchema, ({ host }, input) => host.testModelSettings(input)),
};

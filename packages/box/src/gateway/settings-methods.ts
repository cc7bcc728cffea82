/**
 * The model settings panel (docs/gateway.md): `getModelSettings` returns the provider, base
 * URL and model, and whether a key is saved (never the key); `setModelSettings` saves and
 * applies them. The key travels in this request body only; the gateway never logs bodies.
 */
import { z } from 'zod';
import { modelSettingsInputSchema } from '../host/model-settings.ts';
import { SECRET_NAME_PATTERN } from '../secrets/store.ts';
import { OAUTH_CALLBACK_PATH } from '../mcp/oauth.ts';
import { agentIdSchema, method } from './method-spec.ts';

const secretName = z
  .string()
  .regex(
    SECRET_NAME_PATTERN,
    'a secret name is letters, digits and _, not starting with a digit (at most 128)',
  );

export const settingsMethods = {
  getModelSettings: method(z.object({}), ({ host }) => Promise.resolve(host.modelSettings())),
  setModelSettings: method(modelSettingsInputSchema, ({ host }, input) => host.updateModelSettings(input)),
  /** One small call with the form's (unsaved) settings: `{ok, message, streams, elapsedMs}`. */
  testModelSettings: method(modelSettingsInputSchema, ({ host }, input) => host.testModelSettings(input)),
  /** The box secrets (`${secret:NAME}` in mcp.json): names only, and the names mcp.json needs that are not set. */
  listBoxSecrets: method(z.object({}), ({ host }) => host.listBoxSecrets()),
  /** Saves one, encrypted with the box's key; the value travels in this body only and is never returned. */
  setBoxSecret: method(
    z.object({
      name: secretName,
      // The message names the field only: Zod never echoes the value.
      value: z.string().min(1, 'the secret is empty').max(65_536, 'a secret is at most 64 KiB'),
    }),
    ({ host }, input) => host.setBoxSecret(input),
  ),
  deleteBoxSecret: method(z.object({ name: secretName }), ({ host }, { name }) =>
    host.setBoxSecret({ name, value: undefined }),
  ),
  /**
   * "Connect <server>", on a conversation's card (`agentId`, told when connected) or in the
   * Connectors panel (no agent): `{authorizationUrl}` to open, or `{connected: true}`.
   */
  startMcpConnect: method(
    z.object({ agentId: agentIdSchema.optional(), server: z.string().min(1).max(64) }),
    ({ host, origin }, input) =>
      host.startMcpConnect({ ...input, redirectUrl: `${origin}${OAUTH_CALLBACK_PATH}` }),
  ),
};

/**
 * Provider selection from the environment, and the status line shown when no
 * model is configured. xAI is the default; any OpenAI-compatible endpoint
 * (llama.cpp, Ollama, vLLM, OpenRouter) works through `OPENAI_BASE_URL`.
 */
import { createXai } from '@ai-sdk/xai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelStatus } from './types.ts';
import { aiSdkProvider, idleFetch, type AiSdkProvider } from './ai-sdk.ts';
import type { ModelProvider } from './types.ts';

export * from './types.ts';
export { notStreamingReason, NotStreamedError } from './ai-sdk.ts';
export { scriptedProvider, type ScriptedStep, type ScriptedProvider } from './scripted.ts';

/** A current Grok model id; override with `SENDBOX_MODEL`. */
export const DEFAULT_XAI_MODEL = 'grok-4.7';
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

export const HOW_TO_CONFIGURE_MODEL = [
  'No model is configured. Set one of these in the environment and restart sendbox:',
  '  xAI (default):      XAI_API_KEY=<key>            [SENDBOX_MODEL=<model id>, default ' +
    DEFAULT_XAI_MODEL +
    ']',
  '  OpenAI-compatible:  OPENAI_BASE_URL=<url ending in /v1>  SENDBOX_MODEL=<model id>  [OPENAI_API_KEY=<key>]',
  '                      e.g. llama.cpp http://127.0.0.1:8080/v1, Ollama http://127.0.0.1:11434/v1,',
  '                      vLLM http://127.0.0.1:8000/v1, OpenRouter https://openrouter.ai/api/v1',
  'When both are set, SENDBOX_PROVIDER=xai|openai-compatible picks one (xai otherwise).',
  'Optional: SENDBOX_MODEL_TIMEOUT_MS (idle timeout: no byte from the model for this long, default ' +
    DEFAULT_MODEL_TIMEOUT_MS +
    '),',
  '          SENDBOX_MODEL_MAX_RETRIES (default 2), SENDBOX_MODEL_STREAM=0 for an endpoint that cannot stream',
  '          (found by itself on the first failure otherwise). They apply to a model set in the web UI too.',
].join('\n');

export interface ProviderFromEnv {
  provider: ModelProvider | null;
  status: ModelStatus;
}

/** Picks the provider the environment configures; `provider: null` with a how-to when none is. */
export function providerFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { log?: (line: string) => void } = {},
): ProviderFromEnv {
  const log = options.log ? { logFailure: options.log } : {};
  const timeoutMs = positiveInt(env.SENDBOX_MODEL_TIMEOUT_MS) ?? DEFAULT_MODEL_TIMEOUT_MS;
  const maxRetries = nonNegativeInt(env.SENDBOX_MODEL_MAX_RETRIES) ?? 2;
  // Streaming shows a reply word by word; SENDBOX_MODEL_STREAM=0 for an endpoint that cannot stream.
  const stream = streamFromEnv(env) ?? true;
  const explicit = env.SENDBOX_PROVIDER?.trim();
  const xaiKey = env.XAI_API_KEY?.trim();
  const baseURL = env.OPENAI_BASE_URL?.trim();
  const model = env.SENDBOX_MODEL?.trim() || undefined;

  const notConfigured = (why?: string): ProviderFromEnv => ({
    provider: null,
    status: {
      configured: false,
      provider: null,
      model: null,
      howToConfigure: why ? `${why}\n${HOW_TO_CONFIGURE_MODEL}` : HOW_TO_CONFIGURE_MODEL,
    },
  });

  if (explicit && explicit !== 'xai' && explicit !== 'openai-compatible') {
    return notConfigured(
      `SENDBOX_PROVIDER=${explicit} is not a provider sendbox knows (xai, openai-compatible).`,
    );
  }
  const useXai = explicit === 'xai' || (!explicit && xaiKey);
  if (useXai) {
    if (!xaiKey) return notConfigured('SENDBOX_PROVIDER=xai but XAI_API_KEY is not set.');
    const id = model ?? DEFAULT_XAI_MODEL;
    const xai = createXai({ apiKey: xaiKey, fetch: idleFetch() });
    return configured(
      aiSdkProvider({
        provider: 'xai',
        model: id,
        languageModel: xai(id),
        languageModelFor: (other) => xai(other),
        timeoutMs,
        maxRetries,
        stream,
        ...log,
      }),
    );
  }
  if (explicit === 'openai-compatible' || baseURL) {
    if (!baseURL) return notConfigured('SENDBOX_PROVIDER=openai-compatible but OPENAI_BASE_URL is not set.');
    if (!model)
      return notConfigured(`OPENAI_BASE_URL=${baseURL} is set but SENDBOX_MODEL (the model id) is not.`);
    return configured(
      openAiCompatibleProvider({
        baseURL,
        apiKey: env.OPENAI_API_KEY,
        model,
        timeoutMs,
        maxRetries,
        stream,
        ...log,
      }),
    );
  }
  return notConfigured();
}

export function openAiCompatibleProvider(options: {
  baseURL: string;
  apiKey?: string | undefined;
  model: string;
  timeoutMs?: number;
  maxRetries?: number;
  logFailure?: (line: string) => void;
  stream?: boolean;
  draftIntervalMs?: number;
}): AiSdkProvider {
  const compatible = createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: options.baseURL,
    fetch: idleFetch(),
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  });
  return aiSdkProvider({
    provider: 'openai-compatible',
    model: options.model,
    languageModel: compatible.chatModel(options.model),
    languageModelFor: (model) => compatible.chatModel(model),
    timeoutMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 2,
    ...(options.logFailure ? { logFailure: options.logFailure } : {}),
    ...(options.stream === undefined ? {} : { stream: options.stream }),
    ...(options.draftIntervalMs === undefined ? {} : { draftIntervalMs: options.draftIntervalMs }),
  });
}

/** The status of an explicitly given provider (tests, embedding). */
export function statusOf(provider: ModelProvider | null): ModelStatus {
  if (!provider)
    return { configured: false, provider: null, model: null, howToConfigure: HOW_TO_CONFIGURE_MODEL };
  return { configured: true, provider: provider.provider, model: provider.model, howToConfigure: '' };
}

function configured(provider: ModelProvider): ProviderFromEnv {
  return { provider, status: statusOf(provider) };
}

/** `SENDBOX_MODEL_STREAM`: `0`/`false`/`no`/`off` never streams, `1`/`true`/`yes`/`on` streams; unset: undefined. */
export function streamFromEnv(env: NodeJS.ProcessEnv): boolean | undefined {
  const value = env.SENDBOX_MODEL_STREAM?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  return undefined;
}

function positiveInt(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

function nonNegativeInt(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The model chosen in the web UI's settings panel: provider (xAI or OpenAI-compatible), base
 * URL, model id and key, in `<dataDir>/model-settings.json` (mode 0600, written atomically).
 * The key is never returned (`view` says only whether one is saved) and never logged, and it
 * follows its endpoint: a change of provider or base URL without a new key drops it. The
 * environment wins: when its variables configure a model, the file is ignored and the panel
 * shows the settings as locked, with what is in use. Every `SENDBOX_MODEL_*` variable (timeout,
 * retries, streaming, vision) applies to a panel-set model too. Applying a change needs no restart
 * (the host swaps providers between turns).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { providerFromEnv, streamFromEnv, type ProviderFromEnv } from '../providers/index.ts';
import { isNotFound } from '../sandbox/paths.ts';
import { HostError } from '../agent/errors.ts';
import {
  contextWindowFor,
  MIN_CONTEXT_TOKENS,
  type ContextWindow,
  type ContextWindowSource,
} from '../context/context-window.ts';

export const MODEL_SETTINGS_FILE = 'model-settings.json';

const storedSchema = z.object({
  provider: z.enum(['xai', 'openai-compatible']),
  baseURL: z.string().optional(),
  model: z.string().optional(),
  apiKey: z.string().optional(),
  /** False: a text-only model (images become notes); absent: it sees images. */
  vision: z.boolean().optional(),
  /** The model's context window in tokens; absent: the table of known models decides. */
  contextTokens: z.number().int().min(MIN_CONTEXT_TOKENS).optional(),
  /** False: the endpoint is called without streaming; absent: it streams (found out on the first failure). */
  stream: z.boolean().optional(),
});
export type StoredModelSettings = z.output<typeof storedSchema>;

export const modelSettingsInputSchema = z.object({
  provider: z.enum(['xai', 'openai-compatible']),
  baseURL: z.string().trim().max(2000).optional(),
  model: z.string().trim().max(200).optional(),
  /** Omitted: keep the saved key; empty: remove it. */
  apiKey: z.string().max(4000).optional(),
  /** Whether the model sees images (false: text-only); omitted keeps the saved choice. */
  vision: z.boolean().optional(),
  /** The model's context window in tokens; null: back to the table of known models; omitted keeps it. */
  contextTokens: z
    .number()
    .int('the context window is a whole number of tokens')
    .min(MIN_CONTEXT_TOKENS, `the context window must be at least ${MIN_CONTEXT_TOKENS} tokens`)
    .max(100_000_000, 'the context window is at most 100,000,000 tokens')
    .nullable()
    .optional(),
  /** Whether the endpoint is asked to stream; omitted keeps the saved choice. */
  stream: z.boolean().optional(),
});
export type ModelSettingsInput = z.output<typeof modelSettingsInputSchema>;

/** What the page sees: never the key. */
export interface ModelSettingsView {
  provider: 'xai' | 'openai-compatible' | null;
  baseURL: string;
  model: string;
  hasKey: boolean;
  /** The environment configures the model; the panel cannot change it. */
  lockedByEnvironment: boolean;
  /** Whether the model is shown images (SENDBOX_MODEL_VISION wins over the panel). */
  vision: boolean;
  visionLockedByEnvironment: boolean;
  /** The context window of the model in use, and where that number comes from. */
  contextTokens: number;
  contextTokensSource: ContextWindowSource;
  /** The window the panel saved, if any (the field's value). */
  contextTokensSetting: number | null;
  /** Whether the endpoint is asked to stream (SENDBOX_MODEL_STREAM wins over the panel). */
  stream: boolean;
  streamLockedByEnvironment: boolean;
}

/** `SENDBOX_MODEL_VISION`: `0`/`false`/`no`/`off` text-only, `1`/`true`/`yes`/`on` sees images; unset: undefined. */
export function visionFromEnv(env: NodeJS.ProcessEnv): boolean | undefined {
  const value = env.SENDBOX_MODEL_VISION?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  throw new Error(
    `SENDBOX_MODEL_VISION=${env.SENDBOX_MODEL_VISION} is not understood: set 0 for a text-only model, 1 (or leave it unset) for one that sees images`,
  );
}

/** The variables the settings stand for, under the names `providerFromEnv` reads. */
function asEnv(settings: StoredModelSettings | null): NodeJS.ProcessEnv {
  if (!settings) return {};
  const env: NodeJS.ProcessEnv = { SENDBOX_PROVIDER: settings.provider };
  if (settings.model) env.SENDBOX_MODEL = settings.model;
  if (settings.stream === false) env.SENDBOX_MODEL_STREAM = '0';
  if (settings.provider === 'xai') {
    if (settings.apiKey) env.XAI_API_KEY = settings.apiKey;
  } else {
    if (settings.baseURL) env.OPENAI_BASE_URL = settings.baseURL;
    if (settings.apiKey) env.OPENAI_API_KEY = settings.apiKey;
  }
  return env;
}

export class ModelSettings {
  private stored: StoredModelSettings | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly env: NodeJS.ProcessEnv,
    /** Where a provider's lines go (a failed call, an endpoint that does not stream); stderr by default. */
    private readonly log?: (line: string) => void,
  ) {
    visionFromEnv(env); // a value it does not understand stops the box at start, naming the variable
    contextWindowFor(null, { env }); // the same for SENDBOX_MODEL_CONTEXT_TOKENS
  }

  /** The context window of `model`: SENDBOX_MODEL_CONTEXT_TOKENS, else the panel's field, else the table. */
  contextWindow(model: string | null): ContextWindow {
    return contextWindowFor(model, { env: this.env, setting: this.stored?.contextTokens });
  }

  private get file(): string {
    return path.join(this.dataDir, MODEL_SETTINGS_FILE);
  }

  get lockedByEnvironment(): boolean {
    return providerFromEnv(this.env).status.configured;
  }

  /** Reads the file (a missing one is no settings; a broken one is an error naming the file). */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    const parsed = storedSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new Error(
        `${this.file} is not valid model settings (${parsed.error.issues[0]?.message}); fix or delete it`,
      );
    }
    this.stored = parsed.data;
  }

  /** The provider to use: the environment's when it configures one, else the saved settings'. */
  choose(): ProviderFromEnv {
    if (this.lockedByEnvironment || !this.stored) return providerFromEnv(this.env, this.logOption());
    return providerFromEnv(this.panelEnv(this.stored), this.logOption());
  }

  /** The settings' variables, with every `SENDBOX_MODEL_*` of the environment over them (timeout, retries, streaming). */
  private panelEnv(settings: StoredModelSettings): NodeJS.ProcessEnv {
    return { ...asEnv(settings), ...modelVariables(this.env) };
  }

  private logOption(): { log?: (line: string) => void } {
    return this.log ? { log: this.log } : {};
  }

  /** The key and model id of the model in use when it is xAI's (its own web search can serve `web_search`). */
  xaiModel(): { apiKey: string; model: string } | undefined {
    const env = this.lockedByEnvironment || !this.stored ? this.env : asEnv(this.stored);
    const status = providerFromEnv(env).status;
    const apiKey = env.XAI_API_KEY?.trim();
    return status.provider === 'xai' && apiKey && status.model ? { apiKey, model: status.model } : undefined;
  }

  /** Whether the model sees images: the environment's word, else the panel's, else yes. */
  vision(): boolean {
    return visionFromEnv(this.env) ?? this.stored?.vision ?? true;
  }

  /** What the panel shows; `model` is the model in use (its window is shown). */
  view(model: string | null = null): ModelSettingsView {
    const locked = this.lockedByEnvironment;
    const streamFromEnvironment = streamFromEnv(this.env);
    const window = this.contextWindow(model);
    const common = {
      contextTokens: window.tokens,
      contextTokensSource: window.source,
      contextTokensSetting: this.stored?.contextTokens ?? null,
      lockedByEnvironment: locked,
      vision: this.vision(),
      visionLockedByEnvironment: visionFromEnv(this.env) !== undefined,
      stream: streamFromEnvironment ?? this.stored?.stream ?? true,
      streamLockedByEnvironment: streamFromEnvironment !== undefined,
    };
    if (locked) {
      // Locked: what the environment configures, the model actually in use (never the key).
      const status = providerFromEnv(this.env).status;
      const provider = status.provider === 'xai' ? 'xai' : 'openai-compatible';
      return {
        ...common,
        provider,
        baseURL: provider === 'xai' ? '' : (this.env.OPENAI_BASE_URL?.trim() ?? ''),
        model: status.model ?? '',
        hasKey: Boolean((provider === 'xai' ? this.env.XAI_API_KEY : this.env.OPENAI_API_KEY)?.trim()),
      };
    }
    const s = this.stored;
    return {
      ...common,
      provider: s?.provider ?? null,
      baseURL: s?.baseURL ?? '',
      model: s?.model ?? '',
      hasKey: Boolean(s?.apiKey),
    };
  }

  /**
   * The provider these (unsaved) settings would make, for "Test connection": the saved key is used
   * when the endpoint stays; the environment's model wins when it locks the panel.
   */
  candidate(input: ModelSettingsInput, log: (line: string) => void): ProviderFromEnv & { where: string } {
    const env = this.lockedByEnvironment ? this.env : this.panelEnv(this.next(input));
    const chosen = providerFromEnv(env, { log });
    const where =
      chosen.status.provider === 'xai' ? 'xAI (api.x.ai)' : (env.OPENAI_BASE_URL?.trim() ?? 'the base URL');
    if (!chosen.provider) {
      const why = chosen.status.howToConfigure.split('\n')[0] ?? '';
      throw new HostError(`these settings configure no model: ${panelTerms(why)}`, 400);
    }
    return { ...chosen, where };
  }

  /** Checks, saves (0600) and returns the provider to apply; refuses a setting that configures no model. */
  async update(input: ModelSettingsInput): Promise<ProviderFromEnv> {
    if (this.lockedByEnvironment) {
      throw new HostError(
        'the model is set by environment variables (XAI_API_KEY / OPENAI_BASE_URL / SENDBOX_*), which win over the settings panel; unset them and restart to use the panel',
        409,
      );
    }
    const next = this.next(input);
    const chosen = providerFromEnv(this.panelEnv(next), this.logOption());
    if (!chosen.provider) {
      // The first line of the how-to says what is missing, in environment terms; say it in the panel's.
      const why = chosen.status.howToConfigure.split('\n')[0] ?? '';
      throw new HostError(`these settings configure no model: ${panelTerms(why)}`, 400);
    }
    await writeFileAtomic(this.file, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    this.stored = next;
    return chosen;
  }

  /** The settings the input makes of the saved ones (checked; the key kept while the endpoint stays). */
  private next(input: ModelSettingsInput): StoredModelSettings {
    // A key belongs to its endpoint: kept only while the provider and the base URL stay, so a
    // changed URL never receives the key saved for another one.
    const sameEndpoint = this.stored !== null && sameEndpointAs(this.stored, input);
    const keep = input.apiKey === undefined && sameEndpoint ? this.stored?.apiKey : undefined;
    const apiKey = input.apiKey === undefined ? keep : input.apiKey.trim() || undefined;
    if (input.provider === 'openai-compatible' && input.baseURL) {
      let url: URL;
      try {
        url = new URL(input.baseURL);
      } catch {
        throw new HostError(`base URL "${input.baseURL}" is not a URL; e.g. http://127.0.0.1:11434/v1`, 400);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new HostError(`base URL must be http or https, not ${url.protocol}`, 400);
      }
    }
    return {
      provider: input.provider,
      ...(input.baseURL ? { baseURL: input.baseURL } : {}),
      ...(input.model ? { model: input.model } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...((input.vision ?? this.stored?.vision) === false ? { vision: false } : {}),
      ...contextTokensOf(
        input.contextTokens === undefined ? this.stored?.contextTokens : input.contextTokens,
      ),
      ...((input.stream ?? this.stored?.stream) === false ? { stream: false } : {}),
    };
  }
}

/**
 * Whether the new settings send requests where the saved ones did: the same provider and, for
 * an OpenAI-compatible one, the same base URL (compared as URLs, a trailing slash aside).
 */
export function sameEndpointAs(saved: StoredModelSettings, next: ModelSettingsInput): boolean {
  if (saved.provider !== next.provider) return false;
  if (next.provider === 'xai') return true;
  return endpointOf(saved.baseURL) === endpointOf(next.baseURL);
}

function endpointOf(baseURL: string | undefined): string {
  const text = baseURL?.trim() ?? '';
  try {
    return new URL(text).href.replace(/\/+$/, '');
  } catch {
    return text;
  }
}

function contextTokensOf(tokens: number | null | undefined): { contextTokens?: number } {
  return typeof tokens === 'number' ? { contextTokens: tokens } : {};
}

/** Every `SENDBOX_MODEL_*` variable the environment sets (not `SENDBOX_MODEL`, the panel's model id). */
function modelVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith('SENDBOX_MODEL_') && value !== undefined) out[key] = value;
  }
  return out;
}

function panelTerms(text: string): string {
  return text
    .replace(/SENDBOX_PROVIDER=xai but XAI_API_KEY is not set\./, 'xAI needs an API key.')
    .replace(
      /SENDBOX_PROVIDER=openai-compatible but OPENAI_BASE_URL is not set\./,
      'an OpenAI-compatible provider needs a base URL.',
    )
    .replace(
      /OPENAI_BASE_URL=(\S+) is set but SENDBOX_MODEL \(the model id\) is not\./,
      'an OpenAI-compatible provider needs a model id.',
    );
}

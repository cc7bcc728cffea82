/**
 * How many tokens a model reads in one call (its context window). The operator's
 * `SENDBOX_MODEL_CONTEXT_TOKENS` wins, then the settings panel's field, then the table of known
 * models; an unknown model gets a conservative default, so a long-lived agent is compacted early
 * rather than failing once its history passes a window nobody stated.
 */

/** Models whose window is published, matched on the model id (first match wins). */
const KNOWN_WINDOWS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^grok-4(?:-\d)?-fast|^grok-4-1-fast/, 2_000_000],
  [/^grok-code-fast/, 256_000],
  [/^grok-4/, 256_000],
  [/^grok-3/, 131_072],
  [/^grok-2-vision/, 32_768],
  [/^grok-2/, 131_072],
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^(?:o1|o3|o4)(?:-|$)/, 200_000],
  [/^(?:gpt-4o|chatgpt-4o|gpt-4-turbo)/, 128_000],
  [/^gpt-4(?:-|$)/, 8_192],
  [/^gpt-3\.5-turbo/, 16_385],
  [/^claude-/, 200_000],
  [/llama-?3\.[123]/i, 131_072],
];

/** The window of a model that is not in the table and not configured. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;
/** Below this no agent can hold its system prompt and tools; a smaller setting is refused. */
export const MIN_CONTEXT_TOKENS = 2_048;

export type ContextWindowSource = 'environment' | 'settings' | 'known model' | 'default';

export interface ContextWindow {
  tokens: number;
  source: ContextWindowSource;
}

export function knownContextWindow(model: string): number | undefined {
  const id = model.replace(/^.*\//, '').toLowerCase();
  return KNOWN_WINDOWS.find(([pattern]) => pattern.test(id))?.[1];
}

/** A window setting read from text (the environment); throws a clear error for anything else. */
export function parseContextTokens(value: string, where: string): number {
  const tokens = Number(value.replace(/_/g, ''));
  if (!Number.isInteger(tokens) || tokens < MIN_CONTEXT_TOKENS) {
    throw new Error(
      `${where} must be a whole number of tokens, at least ${MIN_CONTEXT_TOKENS} (got ${JSON.stringify(value)}). ` +
        'Set it to the context window of your model, e.g. 131072.',
    );
  }
  return tokens;
}

export function contextWindowFor(
  model: string | null | undefined,
  options: { env?: NodeJS.ProcessEnv; setting?: number | undefined },
): ContextWindow {
  const fromEnv = options.env?.SENDBOX_MODEL_CONTEXT_TOKENS;
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    return {
      tokens: parseContextTokens(fromEnv.trim(), 'SENDBOX_MODEL_CONTEXT_TOKENS'),
      source: 'environment',
    };
  }
  if (options.setting !== undefined) return { tokens: options.setting, source: 'settings' };
  const known = model ? knownContextWindow(model) : undefined;
  return known !== undefined
    ? { tokens: known, source: 'known model' }
    : { tokens: DEFAULT_CONTEXT_TOKENS, source: 'default' };
}

/**
 * A `ModelProvider` over any AI SDK language model: one `generateText` call per step (or
 * `streamText` when the caller follows `send_message` drafts and the provider streams: the
 * tool-input deltas become drafts), tools declared without `execute` so the SDK never runs them, and
 * without an SDK-side validator so the host's own Zod check writes the
 * model-readable errors (a malformed-JSON call comes back as `invalid`).
 */
import {
  APICallError,
  generateText,
  jsonSchema,
  NoSuchToolError,
  streamText,
  type LanguageModel,
  type ToolSet,
} from 'ai';
import { partialSendText } from './partial-send.ts';
import {
  ModelCallError,
  type ModelProvider,
  type ModelStepRequest,
  type ModelStepResult,
  type ModelToolCall,
} from './types.ts';

export interface AiSdkProviderOptions {
  provider: string;
  model: string;
  languageModel: LanguageModel;
  /** The provider's model by id, for `withModel` (an agent's own model); absent, it has none. */
  languageModelFor?: (model: string) => LanguageModel;
  /** Per-step timeout in ms. */
  timeoutMs: number;
  /** Retries the SDK makes on retryable errors (429, 5xx) before failing the step. */
  maxRetries: number;
  /**
   * Told one line per failed model call (after the SDK's retries), for the terminal. The line
   * names the provider, the model and the error; never the key. Defaults to stderr.
   */
  logFailure?: (line: string) => void;
  /** Whether the endpoint streams (`SENDBOX_MODEL_STREAM=0` for one that does not). Default true. */
  stream?: boolean;
}

const stderrLine = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export function aiSdkProvider(options: AiSdkProviderOptions): ModelProvider {
  const others = new Map<string, ModelProvider>();
  const languageModelFor = options.languageModelFor;
  return {
    provider: options.provider,
    model: options.model,
    ...(languageModelFor
      ? {
          withModel(model: string): ModelProvider {
            if (model === options.model) return this;
            let other = others.get(model);
            if (!other) {
              other = aiSdkProvider({ ...options, model, languageModel: languageModelFor(model) });
              others.set(model, other);
            }
            return other;
          },
        }
      : {}),
    async step(request: ModelStepRequest): Promise<ModelStepResult> {
      const tools: ToolSet = {};
      for (const spec of request.tools) {
        tools[spec.name] = {
          description: spec.description,
          inputSchema: jsonSchema(spec.inputSchema as Parameters<typeof jsonSchema>[0]),
        };
      }
      // Each attempt's failure, kept: when the step's timeout cuts a retry wait, the SDK reports only the abort.
      let lastFailure: unknown;
      const model = observedModel(options.languageModel, (error) => {
        lastFailure = error;
      });
      const started = Date.now();
      const call = {
        model,
        system: request.system,
        messages: [...request.messages],
        tools,
        maxRetries: options.maxRetries,
        timeout: options.timeoutMs,
        ...(request.abortSignal ? { abortSignal: request.abortSignal } : {}),
      };
      try {
        const onDraft = request.onSendDraft;
        if (!onDraft || options.stream === false) {
          const result = await generateText(call);
          return {
            text: result.text,
            reasoning: result.reasoningText ?? '',
            toolCalls: result.toolCalls.map(toModelToolCall),
            finishReason: result.finishReason,
          };
        }
        const result = streamText({ ...call, onError: () => undefined });
        const sends = new Map<string, string>();
        for await (const part of result.fullStream) {
          if (part.type === 'error') throw part.error;
          if (part.type === 'tool-input-start' && part.toolName === 'send_message') sends.set(part.id, '');
          if (part.type === 'tool-input-delta' && sends.has(part.id)) {
            const json = (sends.get(part.id) ?? '') + part.delta;
            sends.set(part.id, json);
            const text = partialSendText(json);
            if (text !== null) onDraft({ toolCallId: part.id, text });
          }
        }
        return {
          text: await result.text,
          reasoning: (await result.reasoningText) ?? '',
          toolCalls: (await result.toolCalls).map(toModelToolCall),
          finishReason: await result.finishReason,
        };
      } catch (error) {
        const message = `${options.provider} model ${options.model}: ${describeFailure(error, lastFailure, options.timeoutMs, Date.now() - started)}`;
        // A stopped turn is not a failure.
        if (!request.abortSignal?.aborted)
          (options.logFailure ?? stderrLine)(`model call failed: ${message}`);
        throw new ModelCallError(message, options.provider, { cause: error });
      }
    },
  };
}

/** The model with each failed attempt (generate or stream start) reported to `onFailure` (the SDK's retries call it once per attempt). */
function observedModel(model: LanguageModel, onFailure: (error: unknown) => void): LanguageModel {
  if (typeof model === 'string') return model;
  const inner = model as unknown as Record<'doGenerate' | 'doStream', (options: unknown) => Promise<unknown>>;
  const observed = (name: 'doGenerate' | 'doStream') => async (callOptions: unknown) => {
    try {
      return await inner[name](callOptions);
    } catch (error) {
      onFailure(error);
      throw error;
    }
  };
  const doGenerate = observed('doGenerate');
  const doStream = observed('doStream');
  // A proxy, not a copy: the model's getters and methods keep running on the model itself.
  return new Proxy(model, {
    get(target, property) {
      if (property === 'doGenerate') return doGenerate;
      if (property === 'doStream') return doStream;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * What went wrong, in the terms a user can act on: the HTTP status (and for a 429 the retry time the
 * provider asked for), or the timeout and its length, with the failure before it when a timeout cut
 * the wait for a retry.
 */
function describeFailure(error: unknown, lastFailure: unknown, timeoutMs: number, elapsedMs: number): string {
  if (isAbort(error)) {
    const timedOut = `no answer within the step timeout of ${timeoutMs} ms (SENDBOX_MODEL_TIMEOUT_MS)`;
    return lastFailure !== undefined && !isAbort(lastFailure)
      ? `${timedOut}; it was waiting to retry after ${describeError(lastFailure)}`
      : `${timedOut}, after ${Math.round(elapsedMs)} ms`;
  }
  return describeError(error);
}

function isAbort(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    error.name === 'AbortError' ||
    error.name === 'TimeoutError' ||
    /aborted/i.test(error.message) ||
    (error.cause instanceof Error && isAbort(error.cause))
  );
}

function toModelToolCall(call: {
  toolCallId: string;
  toolName: string;
  input: unknown;
  dynamic?: boolean;
  invalid?: boolean;
  error?: unknown;
}): ModelToolCall {
  if (call.dynamic && call.invalid) {
    // A tool the model made up: the host tells it which tools it has (not that its JSON is bad).
    if (NoSuchToolError.isInstance(call.error)) {
      return { id: call.toolCallId, name: call.toolName, input: call.input };
    }
    const raw = call.input;
    return {
      id: call.toolCallId,
      name: call.toolName,
      input: undefined,
      parseError: describeError(call.error),
      rawArguments: typeof raw === 'string' ? raw : JSON.stringify(raw),
    };
  }
  return { id: call.toolCallId, name: call.toolName, input: call.input };
}

function describeError(error: unknown): string {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode === undefined ? '' : ` (HTTP ${error.statusCode}${rateLimit(error)})`;
    return `${error.message}${status} from ${error.url}`;
  }
  if (error instanceof Error && 'lastError' in error && APICallError.isInstance(error.lastError)) {
    // The SDK's RetryError: the attempts all failed; the last one says how.
    return `${describeError(error.lastError)}, after ${(error as { errors?: unknown[] }).errors?.length ?? 1} attempts`;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

/** `, rate limited: retry after 30 s` for a 429, from Retry-After / retry-after-ms; empty otherwise. */
function rateLimit(error: APICallError): string {
  if (error.statusCode !== 429) return '';
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  const seconds = Number(headers['retry-after']);
  const after =
    Number.isFinite(ms) && ms > 0
      ? `${ms} ms`
      : Number.isFinite(seconds) && seconds > 0
        ? `${seconds} s`
        : undefined;
  return after ? `, rate limited: the provider asks to retry after ${after}` : ', rate limited';
}

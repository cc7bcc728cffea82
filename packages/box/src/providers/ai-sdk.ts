/**
 * A `ModelProvider` over any AI SDK language model: one `generateText` call
 * per step, tools declared without `execute` so the SDK never runs them, and
 * without an SDK-side validator so the host's own Zod check writes the
 * model-readable errors (a malformed-JSON call comes back as `invalid`).
 */
import {
  APICallError,
  generateText,
  jsonSchema,
  NoSuchToolError,
  type LanguageModel,
  type ToolSet,
} from 'ai';
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
  /** Per-step timeout in ms. */
  timeoutMs: number;
  /** Retries the SDK makes on retryable errors (429, 5xx) before failing the step. */
  maxRetries: number;
}

export function aiSdkProvider(options: AiSdkProviderOptions): ModelProvider {
  return {
    provider: options.provider,
    model: options.model,
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
      try {
        const result = await generateText({
          model,
          system: request.system,
          messages: [...request.messages],
          tools,
          maxRetries: options.maxRetries,
          timeout: options.timeoutMs,
          ...(request.abortSignal ? { abortSignal: request.abortSignal } : {}),
        });
        const toolCalls: ModelToolCall[] = result.toolCalls.map((call) => {
          if (call.dynamic && call.invalid) {
            // A tool the model made up: the host tells it which tools it has (not that its JSON is bad).
            if (NoSuchToolError.isInstance(call.error)) {
              return { id: call.toolCallId, name: call.toolName, input: call.input };
            }
            const raw: unknown = call.input;
            return {
              id: call.toolCallId,
              name: call.toolName,
              input: undefined,
              parseError: describeError(call.error),
              rawArguments: typeof raw === 'string' ? raw : JSON.stringify(raw),
            };
          }
          return { id: call.toolCallId, name: call.toolName, input: call.input as unknown };
        });
        return {
          text: result.text,
          reasoning: result.reasoningText ?? '',
          toolCalls,
          finishReason: result.finishReason,
        };
      } catch (error) {
        throw new ModelCallError(
          `${options.provider} model ${options.model}: ${describeFailure(error, lastFailure, options.timeoutMs, Date.now() - started)}`,
          options.provider,
          { cause: error },
        );
      }
    },
  };
}

/** The model with each failed attempt reported to `onFailure` (the SDK's retries call it once per attempt). */
function observedModel(model: LanguageModel, onFailure: (error: unknown) => void): LanguageModel {
  if (typeof model === 'string') return model;
  const inner = model as unknown as { doGenerate(options: unknown): Promise<unknown> };
  const doGenerate = async (callOptions: unknown): Promise<unknown> => {
    try {
      return await inner.doGenerate(callOptions);
    } catch (error) {
      onFailure(error);
      throw error;
    }
  };
  // A proxy, not a copy: the model's getters and methods keep running on the model itself.
  return new Proxy(model, {
    get(target, property) {
      if (property === 'doGenerate') return doGenerate;
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

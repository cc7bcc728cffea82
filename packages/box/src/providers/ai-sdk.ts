/**
 * A `ModelProvider` over any AI SDK language model: one `generateText` call per step (or
 * `streamText` when the caller follows `send_message` drafts and the provider streams: the
 * tool-input deltas become drafts), tools declared without `execute` so the SDK never runs them, and
 * without an SDK-side validator so the host's own Zod check writes the
 * model-readable errors (a malformed-JSON call comes back as `invalid`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  APICallError,
  generateText,
  jsonSchema,
  NoSuchToolError,
  streamText,
  type LanguageModel,
  type ToolSet,
} from 'ai';
import { DraftPacer } from './draft-pacer.ts';
import { SendDraft } from './partial-send.ts';
import { withRetries } from './retries.ts';
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
  /**
   * The idle timeout in ms: a step fails when the model sends nothing for this long (no byte when
   * the fetch is `idleFetch`'s, else no stream part). A reply that keeps streaming is never cut.
   */
  timeoutMs: number;
  /** Retries on retryable errors (429, 5xx, no connection) before failing the step (retries.ts). */
  maxRetries: number;
  /**
   * Told one line per failed model call (after the SDK's retries), and the one line saying an
   * endpoint does not stream, for the terminal. A line names the provider, the model and the
   * error; never the key. Defaults to stderr.
   */
  logFailure?: (line: string) => void;
  /** Whether the endpoint streams (`SENDBOX_MODEL_STREAM=0` for one that does not). Default true. */
  stream?: boolean;
  /** At most one draft of a streamed send per this many ms (draft-pacer.ts); 0: every delta. Default 33. */
  draftIntervalMs?: number;
}

const DRAFT_INTERVAL_MS = 33;

/** The provider's count of the call's input tokens, when it reports one. */
function inputTokensOf(usage: { inputTokens?: number | undefined } | undefined): { inputTokens?: number } {
  const tokens = usage?.inputTokens;
  return typeof tokens === 'number' && tokens > 0 ? { inputTokens: tokens } : {};
}

const stderrLine = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** An AI SDK provider: it always says whether it streams. */
export type AiSdkProvider = ModelProvider & { streams(): boolean };

export function aiSdkProvider(options: AiSdkProviderOptions): AiSdkProvider {
  const log = options.logFailure ?? stderrLine;
  // Remembered for the provider's life: an endpoint found not to stream is not asked to again.
  let streaming = options.stream !== false;
  const others = new Map<string, ModelProvider>();
  const languageModelFor = options.languageModelFor;
  return {
    provider: options.provider,
    model: options.model,
    streams: () => streaming,
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
      let failures = 0;
      const started = Date.now();
      const idle = new IdleWatch(options.timeoutMs);
      const signal = request.abortSignal ? AbortSignal.any([request.abortSignal, idle.signal]) : idle.signal;
      const model = observedModel(
        options.languageModel,
        (error) => {
          lastFailure = error;
          failures += 1;
        },
        // The box retries, not the SDK: each wait is told to the page (retries.ts).
        (attempt) =>
          withRetries(attempt, { maxRetries: options.maxRetries, signal, onRetry: request.onRetry }),
      );
      const call = {
        model,
        system: request.system,
        messages: [...request.messages],
        tools,
        maxRetries: 0,
        abortSignal: signal,
      };
      const generate = async (): Promise<ModelStepResult> => {
        const result = await generateText(call);
        return {
          text: result.text,
          reasoning: result.reasoningText ?? '',
          toolCalls: result.toolCalls.map(toModelToolCall),
          finishReason: result.finishReason,
          ...inputTokensOf(result.usage),
        };
      };
      try {
        return await idleScope.run(idle, async () => {
          const onDraft = request.onSendDraft;
          if (!onDraft || !streaming) return generate();
          try {
            return await streamStep(
              call,
              new DraftPacer(onDraft, options.draftIntervalMs ?? DRAFT_INTERVAL_MS),
              idle,
            );
          } catch (error) {
            const why = notStreamingReason(error, lastFailure);
            if (why === null || request.abortSignal?.aborted) throw error;
            // Found on the first failure: this endpoint is called without streaming from now on.
            streaming = false;
            log(
              `model ${options.provider} ${options.model}: the endpoint does not stream (${why}); calling it without streaming from now on (SENDBOX_MODEL_STREAM=0 or the settings panel's Streaming switch skips this check)`,
            );
            lastFailure = undefined;
            failures = 0;
            idle.touch();
            return generate();
          }
        });
      } catch (error) {
        const tries = failures > 1 && !isAbort(error) ? `, after ${failures} attempts` : '';
        const message = `${options.provider} model ${options.model}: ${describeFailure(error, lastFailure, options.timeoutMs, Date.now() - started)}${tries}`;
        // A stopped turn is not a failure.
        if (!request.abortSignal?.aborted) log(`model call failed: ${message}`);
        throw new ModelCallError(message, options.provider, { cause: error });
      } finally {
        idle.stop();
      }
    },
  };
}

type StepCall = Parameters<typeof streamText>[0] & Parameters<typeof generateText>[0];

/** One streamed step: each part resets the idle watch; `send_message` argument deltas become drafts. */
async function streamStep(call: StepCall, pacer: DraftPacer, idle: IdleWatch): Promise<ModelStepResult> {
  const result = streamText({ ...call, onError: () => undefined });
  const sends = new Map<string, SendDraft>();
  try {
    for await (const part of result.fullStream) {
      idle.touch();
      if (part.type === 'error') throw part.error;
      if (part.type === 'tool-input-start' && part.toolName === 'send_message')
        sends.set(part.id, new SendDraft());
      if (part.type === 'tool-input-delta') {
        const text = sends.get(part.id)?.push(part.delta);
        if (text !== null && text !== undefined) pacer.draft(part.id, text);
      }
      if (part.type === 'tool-input-end') pacer.flush(part.id);
    }
    pacer.flush();
  } finally {
    pacer.stop();
  }
  return {
    text: await result.text,
    reasoning: (await result.reasoningText) ?? '',
    toolCalls: (await result.toolCalls).map(toModelToolCall),
    finishReason: await result.finishReason,
    ...inputTokensOf(await result.usage),
  };
}

/** A stream request answered with one JSON body: the endpoint ignored `stream: true`. */
export class NotStreamedError extends Error {
  constructor(readonly contentType: string) {
    super(`a stream request was answered with ${contentType}, not an event stream`);
    this.name = 'NotStreamedError';
  }
}

/**
 * Why the failure says the endpoint cannot stream, or null: a JSON body to a stream request, or a
 * 400 whose body names `stream`.
 */
export function notStreamingReason(error: unknown, lastFailure: unknown): string | null {
  for (const candidate of [lastFailure, error, (error as { cause?: unknown } | null)?.cause]) {
    if (candidate instanceof NotStreamedError) return candidate.message;
    if (APICallError.isInstance(candidate) && candidate.statusCode === 400) {
      const said = `${candidate.message} ${candidate.responseBody ?? ''}`;
      if (/\bstream/i.test(said)) return `HTTP 400 naming stream: ${oneLine(candidate.message)}`;
    }
  }
  return null;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/**
 * The idle timeout of one step: it fires when nothing arrives for `ms`. `touch` on every byte
 * (idleFetch) or stream part; `signal` aborts the step.
 */
export class IdleWatch {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout;
  private last = Date.now();
  constructor(private readonly ms: number) {
    this.timer = setTimeout(() => this.check(), ms);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  /** Something arrived: the clock starts again (cheap: one timestamp; the timer re-arms itself). */
  touch(): void {
    this.last = Date.now();
  }
  stop(): void {
    clearTimeout(this.timer);
  }
  private check(): void {
    const quiet = Date.now() - this.last;
    if (quiet >= this.ms) {
      this.controller.abort(new IdleTimeoutError(this.ms));
      return;
    }
    this.timer = setTimeout(() => this.check(), this.ms - quiet);
  }
}

export class IdleTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`no byte from the model for ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** The idle watch of the step this async context runs (idleFetch touches it). */
const idleScope = new AsyncLocalStorage<IdleWatch>();

/**
 * A fetch whose response bodies touch the running step's idle watch on every chunk, so the idle
 * timeout counts bytes, not only parsed parts (a long tool-call argument or a slow JSON body).
 */
export function idleFetch(inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const watch = idleScope.getStore();
    const response = await inner(input, init);
    watch?.touch();
    if (!watch || !response.body) return response;
    const touched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watch.touch();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(touched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The model with each call (generate or stream start) run through `retried`, and each failed attempt
 * reported to `onFailure`.
 */
function observedModel(
  model: LanguageModel,
  onFailure: (error: unknown) => void,
  retried: <T>(attempt: () => Promise<T>) => Promise<T>,
): LanguageModel {
  if (typeof model === 'string') return model;
  const inner = model as unknown as Record<'doGenerate' | 'doStream', (options: unknown) => Promise<unknown>>;
  const observed = (name: 'doGenerate' | 'doStream') => (callOptions: unknown) =>
    retried(async () => {
      try {
        return await inner[name](callOptions);
      } catch (error) {
        onFailure(error);
        throw error;
      }
    });
  const doGenerate = observed('doGenerate');
  const streamed = observed('doStream');
  // An endpoint that ignores `stream: true` answers JSON; the SDK would read it as an empty stream.
  const doStream = async (callOptions: unknown) => {
    const result = (await streamed(callOptions)) as { response?: { headers?: Record<string, string> } };
    const type = result.response?.headers?.['content-type'] ?? '';
    if (/json/i.test(type) && !/event-stream/i.test(type)) {
      const error = new NotStreamedError(type);
      onFailure(error);
      throw error;
    }
    return result;
  };
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
    const timedOut = `nothing from the model for ${timeoutMs} ms, the idle timeout (SENDBOX_MODEL_TIMEOUT_MS)`;
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

/**
 * A `ModelProvider` over any AI SDK language model: one `generateText` call per step (or
 * `streamText` when the caller follows `send_message` drafts and the provider streams: the
 * tool-input deltas become drafts), tools declared without `execute` so the SDK never runs them, and
 * without an SDK-side validator so the host's own Zod check writes the
 * model-readable errors (a malformed-JSON call comes back as `invalid`).
 */
import { APICallError, generateText, jsonSchema, streamText, type LanguageModel, type ToolSet } from 'ai';
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
      const call = {
        model: options.languageModel,
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
        const message = `${options.provider} model ${options.model}: ${describeError(error)}`;
        // A stopped turn is not a failure.
        if (!request.abortSignal?.aborted)
          (options.logFailure ?? stderrLine)(`model call failed: ${message}`);
        throw new ModelCallError(message, options.provider, { cause: error });
      }
    },
  };
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
    return {
      id: call.toolCallId,
      name: call.toolName,
      input: undefined,
      parseError: describeError(call.error),
    };
  }
  return { id: call.toolCallId, name: call.toolName, input: call.input };
}

function describeError(error: unknown): string {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode === undefined ? '' : ` (HTTP ${error.statusCode})`;
    return `${error.message}${status} from ${error.url}`;
  }
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

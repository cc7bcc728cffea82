/**
 * A `ModelProvider` over any AI SDK language model: one `generateText` call
 * per step, tools declared without `execute` so the SDK never runs them, and
 * without an SDK-side validator so the host's own Zod check writes the
 * model-readable errors (a malformed-JSON call comes back as `invalid`).
 */
import { APICallError, generateText, jsonSchema, type LanguageModel, type ToolSet } from 'ai';
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
      try {
        const result = await generateText({
          model: options.languageModel,
          system: request.system,
          messages: [...request.messages],
          tools,
          maxRetries: options.maxRetries,
          timeout: options.timeoutMs,
          ...(request.abortSignal ? { abortSignal: request.abortSignal } : {}),
        });
        const toolCalls: ModelToolCall[] = result.toolCalls.map((call) => {
          if (call.dynamic && call.invalid) {
            return {
              id: call.toolCallId,
              name: call.toolName,
              input: undefined,
              parseError: describeError(call.error),
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
        const message = `${options.provider} model ${options.model}: ${describeError(error)}`;
        // A stopped turn is not a failure.
        if (!request.abortSignal?.aborted)
          (options.logFailure ?? stderrLine)(`model call failed: ${message}`);
        throw new ModelCallError(message, options.provider, { cause: error });
      }
    },
  };
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

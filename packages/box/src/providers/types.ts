/**
 * The one small interface every model provider implements. The turn loop
 * calls `step` once per model step, so the state machine, the middleware and
 * the send gate sit between steps (the providers never execute tools).
 */
import type { ModelMessage } from 'ai';
import type { ModelRetry } from './retries.ts';

export type { ModelMessage, ModelRetry };

/** A tool as the model sees it: a name, a description and a JSON Schema of its input. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelStepRequest {
  system: string;
  messages: readonly ModelMessage[];
  tools: readonly ModelToolSpec[];
  abortSignal?: AbortSignal;
  /**
   * Told, while the model writes them, the text of each `send_message` call so far (a
   * streaming provider only; the call is still checked when complete). `text: null`: never.
   */
  onSendDraft?: (draft: { toolCallId: string; text: string }) => void;
  /** Told before each wait to retry a call the provider refused for now; null once a retried call answered or failed for good. */
  onRetry?: (retry: ModelRetry | null) => void;
}

export interface ModelToolCall {
  id: string;
  name: string;
  /** The parsed arguments; `undefined` when they were not valid JSON (see `parseError`). */
  input: unknown;
  /** Set when the model's arguments could not be parsed: what was wrong, for the model to fix. */
  parseError?: string;
  /** The arguments as the model sent them, when they did not parse (kept in the JSONL `tool_use`). */
  rawArguments?: string;
}

export interface ModelStepResult {
  /** Plain assistant text: private thinking in sendbox, never shown to the user. */
  text: string;
  /** Reasoning the provider returned separately, if any. */
  reasoning: string;
  toolCalls: ModelToolCall[];
  finishReason: string;
  /** The input tokens the provider reports for the call, when it does (calibrates context/tokens.ts). */
  inputTokens?: number;
}

/** Which model is in use, or how to configure one. */
export interface ModelStatus {
  configured: boolean;
  /** e.g. `xai`, `openai-compatible`, `scripted`. */
  provider: string | null;
  model: string | null;
  /** Exact steps to configure a model, shown in the terminal and the UI when not configured. */
  howToConfigure: string;
}

export interface ModelProvider {
  /** `xai`, `openai-compatible`, `scripted`. */
  readonly provider: string;
  readonly model: string;
  step(request: ModelStepRequest): Promise<ModelStepResult>;
  /**
   * The same provider (endpoint, key, limits) with another model id: an agent's own model
   * (`updateAgent {model}`). Absent: the provider serves one model only.
   */
  withModel?(model: string): ModelProvider;
  /** Whether steps stream (false once the endpoint was found not to); absent: the provider never streams. */
  streams?(): boolean;
}

/** A model call that failed (HTTP error, timeout, bad response): the turn records a notice and ends. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly provider: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ModelCallError';
  }
}

/**
 * A scripted model for tests and the no-model demo: each step returns the
 * next scripted result (or what a function computes from the request), and
 * every request is kept so a test can check exactly what the model saw.
 *
 * A subagent's script rides in its prompt: when the first user message of a
 * request holds `<scripted-steps>[…]</scripted-steps>` (JSON steps, `error` a
 * message), the step is the one at the index of the request's assistant
 * messages, whatever the main script holds. The answer depends on the request
 * alone, so children running at once each follow their own script.
 */
import type { ModelProvider, ModelStepRequest, ModelStepResult, ModelToolCall } from './types.ts';

export interface ScriptedStep {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<Omit<ModelToolCall, 'id'> & { id?: string }>;
  /** Throw this instead of answering (a failed model call). */
  error?: Error;
  /** The input tokens the provider reports for this call. */
  inputTokens?: number;
}

export type ScriptSource = ScriptedStep[] | ((request: ModelStepRequest, index: number) => ScriptedStep);

export interface ScriptedProvider extends ModelProvider {
  /** Every request, in order, deep-copied at the time of the call. */
  readonly requests: ModelStepRequest[];
  /** The model id each request was made to (an agent's own model: `withModel`), in order. */
  readonly models: string[];
  /** Appends steps to an array script. */
  push(...steps: ScriptedStep[]): void;
  /** Steps not yet consumed (array scripts). */
  remaining(): number;
}

export function scriptedProvider(script: ScriptSource = [], model = 'scripted-model'): ScriptedProvider {
  const queue = Array.isArray(script) ? [...script] : null;
  const requests: ModelStepRequest[] = [];
  const models: string[] = [];
  let index = 0;
  let callCounter = 0;
  const provider: ScriptedProvider = {
    provider: 'scripted',
    model,
    requests,
    models,
    push(...steps) {
      if (!queue) throw new Error('scriptedProvider: push() needs an array script');
      queue.push(...steps);
    },
    remaining: () => queue?.length ?? Infinity,
    // Another model id answers from the same script; `models` says which id each request went to.
    withModel: (other) => ({
      provider: 'scripted',
      model: other,
      step: (request) => answer(request, other),
    }),
    step: (request) => answer(request, model),
  };
  return provider;

  function answer(request: ModelStepRequest, to: string): Promise<ModelStepResult> {
    models.push(to);
    const snapshot: ModelStepRequest = structuredClone({
      system: request.system,
      messages: request.messages,
      tools: request.tools,
    });
    requests.push(snapshot);
    const inPrompt = promptScript(snapshot);
    const step =
      inPrompt !== null
        ? inPrompt
        : queue
          ? queue.shift()
          : script instanceof Function
            ? script(snapshot, index)
            : undefined;
    index += 1;
    if (!step) {
      return Promise.reject(new Error(`scripted model: no step scripted for call #${index}`));
    }
    if (step.error) return Promise.reject(step.error);
    const result: ModelStepResult = {
      text: step.text ?? '',
      reasoning: step.reasoning ?? '',
      toolCalls: (step.toolCalls ?? []).map((call) => ({
        ...call,
        id: call.id ?? `call_${++callCounter}`,
      })),
      finishReason: step.toolCalls?.length ? 'tool-calls' : 'stop',
      ...(step.inputTokens === undefined ? {} : { inputTokens: step.inputTokens }),
    };
    return Promise.resolve(result);
  }
}

const PROMPT_SCRIPT = /<scripted-steps>([\s\S]*?)<\/scripted-steps>/;

/** The step a script in the request's first user message gives (null: no script there). */
function promptScript(request: ModelStepRequest): ScriptedStep | undefined | null {
  const first = request.messages.find((message) => message.role === 'user');
  if (!first) return null;
  const text =
    typeof first.content === 'string'
      ? first.content
      : first.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  const found = PROMPT_SCRIPT.exec(text);
  if (!found) return null;
  const steps = JSON.parse(found[1]!) as Array<Omit<ScriptedStep, 'error'> & { error?: string }>;
  const at = request.messages.filter((message) => message.role === 'assistant').length;
  const step = steps[at];
  if (!step) return undefined;
  return step.error === undefined ? (step as ScriptedStep) : { ...step, error: new Error(step.error) };
}

/** A prompt carrying a subagent's script (tests): `task {prompt: withScript('Do X', steps)}`. */
export function withScript(
  prompt: string,
  steps: ReadonlyArray<Omit<ScriptedStep, 'error'> & { error?: string }>,
): string {
  return `${prompt}\n<scripted-steps>${JSON.stringify(steps)}</scripted-steps>`;
}

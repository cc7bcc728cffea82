/**
 * A scripted model for tests and the no-model demo: each step returns the
 * next scripted result (or what a function computes from the request), and
 * every request is kept so a test can check exactly what the model saw.
 */
import type { ModelProvider, ModelStepRequest, ModelStepResult, ModelToolCall } from './types.ts';

export interface ScriptedStep {
  text?: string;
  reasoning?: string;
  toolCalls?: Array<Omit<ModelToolCall, 'id'> & { id?: string }>;
  /** Throw this instead of answering (a failed model call). */
  error?: Error;
}

export type ScriptSource = ScriptedStep[] | ((request: ModelStepRequest, index: number) => ScriptedStep);

export interface ScriptedProvider extends ModelProvider {
  /** Every request, in order, deep-copied at the time of the call. */
  readonly requests: ModelStepRequest[];
  /** Appends steps to an array script. */
  push(...steps: ScriptedStep[]): void;
  /** Steps not yet consumed (array scripts). */
  remaining(): number;
}

export function scriptedProvider(script: ScriptSource = [], model = 'scripted-model'): ScriptedProvider {
  const queue = Array.isArray(script) ? [...script] : null;
  const requests: ModelStepRequest[] = [];
  let index = 0;
  let callCounter = 0;
  return {
    provider: 'scripted',
    model,
    requests,
    push(...steps) {
      if (!queue) throw new Error('scriptedProvider: push() needs an array script');
      queue.push(...steps);
    },
    remaining: () => queue?.length ?? Infinity,
    step(request) {
      const snapshot: ModelStepRequest = structuredClone({
        system: request.system,
        messages: request.messages,
        tools: request.tools,
      });
      requests.push(snapshot);
      const step = queue ? queue.shift() : script instanceof Function ? script(snapshot, index) : undefined;
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
      };
      return Promise.resolve(result);
    },
  };
}

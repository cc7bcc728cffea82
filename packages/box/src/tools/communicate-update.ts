/**
 * Grok Bot records its own host tools (update_state, CreateAgent, …) as `communicate_update` calls
 * whose `currentStep` is a JSON string tagged `__sand_tool__: true`, naming the tool and what it
 * acts on (`detail`, `target`); the result is `success{currentStep: <the answer>}` or
 * `error{error}` (docs/formats/grok-bot.md, "update_state"). sendbox adds the model's own arguments
 * as `args`, so a history rebuilt from the JSONL gives the model back the call it made.
 */
import type { JsonObject, JsonValue } from '@sendbox/txcript';

export const COMMUNICATE_UPDATE = 'communicate_update';
export const SAND_TOOL_MARKER = '__sand_tool__';

export interface SandStep {
  tool: string;
  detail?: string;
  target?: string;
  args?: JsonObject;
}

/** The `currentStep` string of a recorded host-tool call. */
export function encodeSandStep(step: SandStep): string {
  return JSON.stringify({ [SAND_TOOL_MARKER]: true, ...step });
}

/**
 * The call the model made, from a recorded `communicate_update` input that sendbox wrote (it has
 * `tool` and `args`); null for anything else (Grok Bot's own status updates stay as they are).
 */
export function modelCallOf(name: string, input: JsonObject): { name: string; input: JsonObject } | null {
  if (name !== COMMUNICATE_UPDATE || typeof input.currentStep !== 'string') return null;
  let step: JsonValue;
  try {
    step = JSON.parse(input.currentStep) as JsonValue;
  } catch {
    return null;
  }
  if (!isObject(step) || step[SAND_TOOL_MARKER] !== true) return null;
  if (typeof step.tool !== 'string' || !isObject(step.args)) return null;
  return { name: step.tool, input: step.args };
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Small readers of the JSON values harnesses store (fields that may be
 * missing or of another type), and the helpers every harness's tool mapping
 * uses to type a native call: one copy here rather than one per harness.
 */
import type { JsonObject, JsonValue, Tool } from '../model/common.ts';
import { isJsonObject } from '../model/json.ts';
import { toolFromCanonical } from '../model/tool.ts';

/** Field `key` of `o` when it is a string. */
export function str(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

/** `v` when it is a non-empty string. */
export function nonEmpty(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `v` when it is a JSON object, else an empty one (for reading nested fields that may be missing). */
export function obj(v: JsonValue | undefined): JsonObject {
  return isJsonObject(v) ? v : {};
}

/** Milliseconds since the epoch as RFC 3339 UTC; undefined for anything else or a time Date cannot hold. */
export function millisTime(v: unknown): string | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  const date = new Date(v);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Seconds since the epoch (a float) as RFC 3339 UTC, to the millisecond. */
export function secondsTime(v: unknown): string | undefined {
  return typeof v === 'number' ? millisTime(Math.round(v * 1000)) : undefined;
}

/** Tool-call arguments the way OpenAI-style APIs store them (a JSON string), parsed; kept as the string when not JSON. */
export function parseArguments(args: JsonValue | undefined): JsonValue {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args) as JsonValue;
  } catch {
    return args;
  }
}

/** Whether `o` has no key outside `allowed`. */
export function onlyKeys(o: JsonObject, allowed: readonly string[]): boolean {
  return Object.keys(o).every((k) => allowed.includes(k));
}

/** The typed tool `toolFromCanonical` gives, or undefined when it stays Raw. */
export function typedTool(name: string, input: JsonObject): Tool | undefined {
  const tool = toolFromCanonical(name, input);
  return tool.name === 'Raw' ? undefined : tool;
}

/** `input` with the keys `names` maps renamed, the others kept. */
export function renamedKeys(input: JsonObject, names: Readonly<Record<string, string>>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(input)) out[names[k] ?? k] = v;
  return out;
}

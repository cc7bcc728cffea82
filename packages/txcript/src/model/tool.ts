/**
 * Canonical tool typing: a typed `Tool` only when the input round-trips
 * exactly, `Raw` otherwise. Exactness is checked by re-serialising the typed
 * form and comparing it with the input, so an unexpected key, a wrong value
 * type or an explicit default all fall back to `Raw` and nothing is lost.
 */
import type { JsonObject, JsonValue, Tool } from './common.ts';
import { isJsonObject as isObject, jsonEqual } from './json.ts';

type FieldKind = 'string' | 'integer' | 'boolean' | 'edits';
interface ToolSchema {
  required: Record<string, FieldKind>;
  optional: Record<string, FieldKind>;
}

const schemas: Record<'Read' | 'Write' | 'Edit' | 'MultiEdit' | 'Bash', ToolSchema> = {
  Read: { required: { file_path: 'string' }, optional: { offset: 'integer', limit: 'integer' } },
  Write: { required: { file_path: 'string', content: 'string' }, optional: {} },
  Edit: {
    required: { file_path: 'string', old_string: 'string', new_string: 'string' },
    optional: { replace_all: 'boolean' },
  },
  MultiEdit: { required: { file_path: 'string', edits: 'edits' }, optional: {} },
  Bash: {
    required: { command: 'string' },
    optional: {
      workdir: 'string',
      timeout_ms: 'integer',
      description: 'string',
      run_in_background: 'boolean',
    },
  },
};

function fits(kind: FieldKind, v: JsonValue): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
    case 'boolean':
      return typeof v === 'boolean';
    case 'edits':
      return (
        Array.isArray(v) &&
        v.every(
          (e) =>
            isObject(e) &&
            typeof e.old_string === 'string' &&
            typeof e.new_string === 'string' &&
            (e.replace_all === undefined || typeof e.replace_all === 'boolean') &&
            Object.keys(e).every((k) => k === 'old_string' || k === 'new_string' || k === 'replace_all'),
        )
      );
  }
}

function fitsSchema(schema: ToolSchema, input: JsonObject): boolean {
  for (const [key, kind] of Object.entries(schema.required)) {
    const v = input[key];
    if (v === undefined || !fits(kind, v)) return false;
  }
  for (const [key, v] of Object.entries(input)) {
    if (key in schema.required) continue;
    const kind = schema.optional[key];
    if (kind === undefined || !fits(kind, v)) return false;
  }
  return true;
}

/** Build a Tool from a canonical (Claude-convention) name and input. */
export function toolFromCanonical(name: string, input: JsonValue): Tool {
  const raw: Tool = { name: 'Raw', tool_name: name, input };
  if (!isObject(input)) return raw;
  let typed: Tool | undefined;
  if (name.startsWith('/')) {
    const keys = Object.keys(input);
    if (keys.every((k) => k === 'args') && (input.args === undefined || typeof input.args === 'string')) {
      typed = {
        name: 'Command',
        command: name,
        ...(typeof input.args === 'string' ? { args: input.args } : {}),
      };
    }
  } else if (name in schemas) {
    const key = name as keyof typeof schemas;
    if (fitsSchema(schemas[key], input)) typed = { name: key, ...input } as Tool;
  }
  if (typed === undefined) return raw;
  // Exactness: the typed form must give back the very same input.
  const back = toolToCanonical(typed);
  return back.name === name && jsonEqual(back.input, input) ? typed : raw;
}

/** Inverse of toolFromCanonical: the canonical name and input. */
export function toolToCanonical(tool: Tool): { name: string; input: JsonValue } {
  switch (tool.name) {
    case 'Raw':
      return { name: tool.tool_name, input: tool.input };
    case 'Command':
      return { name: tool.command, input: tool.args === undefined ? {} : { args: tool.args } };
    case 'Read':
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
    case 'Bash': {
      const { name, ...rest } = tool;
      const input: JsonObject = {};
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) input[k] = v as JsonValue;
      return { name, input };
    }
  }
}

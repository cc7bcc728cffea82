/**
 * Grok CLI tool calls <-> Common tools. Its tools are Cursor's: `Shell
 * {command, block_until_ms}`, `StrReplace {path, old_string, new_string}`,
 * `Read {path, offset, limit}`, `Write {path, contents}`. A call is typed
 * only when its arguments map exactly (`block_until_ms` arrives as a float
 * and becomes `timeout_ms` only when it is a whole number); anything else
 * stays Raw under Grok's name.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';

const TOOLS: Record<string, { canonical: string; keys: Record<string, string> }> = {
  Shell: {
    canonical: 'Bash',
    keys: { command: 'command', block_until_ms: 'timeout_ms', description: 'description' },
  },
  StrReplace: {
    canonical: 'Edit',
    keys: {
      path: 'file_path',
      old_string: 'old_string',
      new_string: 'new_string',
      replace_all: 'replace_all',
    },
  },
  Read: { canonical: 'Read', keys: { path: 'file_path', offset: 'offset', limit: 'limit' } },
  Write: { canonical: 'Write', keys: { path: 'file_path', contents: 'content' } },
};

function rename(input: JsonObject, keys: Record<string, string>): JsonObject | undefined {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(input)) {
    const to = keys[k];
    if (to === undefined) return undefined;
    out[to] = to === 'timeout_ms' && typeof v === 'number' && Number.isInteger(v) ? Math.trunc(v) : v;
  }
  return out;
}

export function grokToolToCommon(name: string, args: JsonValue): Tool {
  const spec = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
  if (spec === undefined) return toolFromCanonical(name, args);
  const canonical = isJsonObject(args) ? rename(args, spec.keys) : undefined;
  const tool = canonical !== undefined ? toolFromCanonical(spec.canonical, canonical) : undefined;
  // `Read` and `Write` are Claude's names too: a call in Claude's shape is read as one.
  if ((tool === undefined || tool.name === 'Raw') && (name === 'Read' || name === 'Write'))
    return toolFromCanonical(name, args);
  return tool !== undefined && tool.name !== 'Raw' ? tool : { name: 'Raw', tool_name: name, input: args };
}

export function commonToolToGrok(tool: Tool): { name: string; args: JsonValue } {
  const { name, input } = toolToCanonical(tool);
  if (tool.name !== 'Raw' && isJsonObject(input))
    for (const [native, spec] of Object.entries(TOOLS)) {
      if (spec.canonical !== name) continue;
      const back = rename(input, Object.fromEntries(Object.entries(spec.keys).map(([k, v]) => [v, k])));
      if (back !== undefined) return { name: native, args: back };
    }
  return { name, args: input };
}

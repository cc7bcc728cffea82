/**
 * OpenCode tool calls <-> Common tools. OpenCode's built-ins name files
 * `filePath` and edits `oldString` / `newString` / `replaceAll`; its bash
 * takes a `timeout` in milliseconds and a `description`. A call is typed
 * only when its input maps exactly; anything else stays Raw under its
 * OpenCode name. A typed tool OpenCode cannot express keeps its canonical
 * name and input.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';

/** OpenCode name -> canonical name and key renames (OpenCode key -> canonical key). */
const TOOLS: Record<string, { canonical: string; keys: Record<string, string> }> = {
  bash: {
    canonical: 'Bash',
    keys: { command: 'command', timeout: 'timeout_ms', description: 'description' },
  },
  read: { canonical: 'Read', keys: { filePath: 'file_path', offset: 'offset', limit: 'limit' } },
  write: { canonical: 'Write', keys: { filePath: 'file_path', content: 'content' } },
  edit: {
    canonical: 'Edit',
    keys: {
      filePath: 'file_path',
      oldString: 'old_string',
      newString: 'new_string',
      replaceAll: 'replace_all',
    },
  },
};

function rename(input: JsonObject, keys: Record<string, string>): JsonObject | undefined {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(input)) {
    const to = keys[k];
    if (to === undefined) return undefined;
    out[to] = v;
  }
  return out;
}

/** A `tool` part's name and `state.input` as a Common tool. */
export function openCodeToolToCommon(name: string, input: JsonValue): Tool {
  const spec = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
  if (spec === undefined) return toolFromCanonical(name, input);
  const canonical = isJsonObject(input) ? rename(input, spec.keys) : undefined;
  const tool = canonical !== undefined ? toolFromCanonical(spec.canonical, canonical) : undefined;
  return tool !== undefined && tool.name !== 'Raw' ? tool : { name: 'Raw', tool_name: name, input };
}

/** The OpenCode name and input of a Common tool. */
export function commonToolToOpenCode(tool: Tool): { name: string; input: JsonValue } {
  const { name, input } = toolToCanonical(tool);
  for (const [native, spec] of Object.entries(TOOLS)) {
    if (spec.canonical !== name || tool.name === 'Raw' || !isJsonObject(input)) continue;
    const back = Object.fromEntries(Object.entries(spec.keys).map(([k, v]) => [v, k]));
    const renamed = rename(input, back);
    if (renamed !== undefined) return { name: native, input: renamed };
  }
  return { name, input };
}

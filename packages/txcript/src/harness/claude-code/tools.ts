/**
 * Claude Code tool inputs <-> Common tools. Claude's Read, Write, Edit and
 * MultiEdit already use the canonical names and keys. Bash differs in one
 * key: Claude calls the timeout `timeout` (ms), Common `timeout_ms`. The
 * rename is done only when it can be undone exactly: an input that already
 * has a `timeout_ms` key stays Raw.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { isJsonObject } from '../../model/json.ts';

export function claudeToolToCommon(name: string, input: JsonValue): Tool {
  if (name === 'Bash' && isJsonObject(input)) {
    if ('timeout_ms' in input) return { name: 'Raw', tool_name: name, input };
    const renamed: JsonObject = {};
    for (const [k, v] of Object.entries(input)) renamed[k === 'timeout' ? 'timeout_ms' : k] = v;
    const tool = toolFromCanonical('Bash', renamed);
    return tool.name === 'Bash' ? tool : { name: 'Raw', tool_name: name, input };
  }
  return toolFromCanonical(name, input);
}

/** The Claude name and input; the Messages API needs an object input, so others are wrapped as `{input}`. */
export function commonToolToClaude(tool: Tool): { name: string; input: JsonObject } {
  const { name, input } = toolToCanonical(tool);
  if (tool.name === 'Bash' && isJsonObject(input)) {
    const renamed: JsonObject = {};
    for (const [k, v] of Object.entries(input)) renamed[k === 'timeout_ms' ? 'timeout' : k] = v;
    return { name, input: renamed };
  }
  return { name, input: isJsonObject(input) ? input : { input } };
}

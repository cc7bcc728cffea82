/**
 * Amp tool calls <-> Common tools. Amp's tools span two eras: `Bash {cmd,
 * cwd}` then `shell_command {command, workdir}`, `Read {path, read_range:
 * [first, last]}`, `edit_file {path, old_str, new_str}`, `create_file {path,
 * content}`. A call is typed only when its input maps exactly; anything
 * else stays Raw under Amp's name. Writing uses today's names; a typed tool
 * Amp cannot express keeps its canonical name and input.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { onlyKeys, renamedKeys, typedTool } from '../native-values.ts';

function readToCommon(input: JsonObject): Tool | undefined {
  if (!onlyKeys(input, ['path', 'read_range'])) return undefined;
  const { read_range: range, ...rest } = input;
  const base = renamedKeys(rest, { path: 'file_path' });
  if (range === undefined) return typedTool('Read', base);
  if (!Array.isArray(range) || range.length !== 2) return undefined;
  const [first, last] = range;
  if (typeof first !== 'number' || typeof last !== 'number' || first < 1 || last < first) return undefined;
  return typedTool('Read', { ...base, offset: first, limit: last - first + 1 });
}

const AMP_NAMES = new Set(['Bash', 'shell_command', 'Read', 'edit_file', 'create_file']);

/** An Amp `tool_use` block's name and input as a Common tool. */
export function ampToolToCommon(name: string, input: JsonValue): Tool {
  if (!AMP_NAMES.has(name) || !isJsonObject(input))
    return AMP_NAMES.has(name) ? { name: 'Raw', tool_name: name, input } : toolFromCanonical(name, input);
  let tool: Tool | undefined;
  if (name === 'Bash' && onlyKeys(input, ['cmd', 'cwd']))
    tool = typedTool('Bash', renamedKeys(input, { cmd: 'command', cwd: 'workdir' }));
  else if (name === 'shell_command' && onlyKeys(input, ['command', 'workdir']))
    tool = typedTool('Bash', input);
  else if (name === 'Read') tool = readToCommon(input);
  else if (name === 'edit_file' && onlyKeys(input, ['path', 'old_str', 'new_str']))
    tool = typedTool(
      'Edit',
      renamedKeys(input, { path: 'file_path', old_str: 'old_string', new_str: 'new_string' }),
    );
  else if (name === 'create_file' && onlyKeys(input, ['path', 'content']))
    tool = typedTool('Write', renamedKeys(input, { path: 'file_path' }));
  // `Bash` and `Read` are Claude's names too: a call in Claude's shape (one this codec wrote) is read as one.
  if (tool === undefined && (name === 'Bash' || name === 'Read')) return toolFromCanonical(name, input);
  return tool ?? { name: 'Raw', tool_name: name, input };
}

/** The Amp name and input of a Common tool. */
export function commonToolToAmp(tool: Tool): { name: string; input: JsonValue } {
  if (
    tool.name === 'Bash' &&
    tool.timeout_ms === undefined &&
    tool.description === undefined &&
    tool.run_in_background === undefined
  )
    return {
      name: 'shell_command',
      input: { command: tool.command, ...(tool.workdir !== undefined ? { workdir: tool.workdir } : {}) },
    };
  if (
    tool.name === 'Read' &&
    (tool.offset === undefined) === (tool.limit === undefined) &&
    (tool.limit ?? 1) > 0 &&
    (tool.offset ?? 1) > 0
  ) {
    const input: JsonObject = { path: tool.file_path };
    if (tool.offset !== undefined && tool.limit !== undefined)
      input.read_range = [tool.offset, tool.offset + tool.limit - 1];
    return { name: 'Read', input };
  }
  if (tool.name === 'Edit' && tool.replace_all === undefined)
    return {
      name: 'edit_file',
      input: { path: tool.file_path, old_str: tool.old_string, new_str: tool.new_string },
    };
  if (tool.name === 'Write')
    return { name: 'create_file', input: { path: tool.file_path, content: tool.content } };
  const { name, input } = toolToCanonical(tool);
  return { name, input };
}

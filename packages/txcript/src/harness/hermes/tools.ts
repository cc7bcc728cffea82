/**
 * Hermes's tool vocabulary against the canonical tools: `read_file` and
 * `write_file` (`path`) are Read and Write, `patch` in `replace` mode is
 * Edit, `terminal` is Bash (`background`, `timeout` in seconds). A call is
 * typed only when writing it back gives the very arguments Hermes wrote;
 * any other stays `Raw` under its own name.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject, jsonEqual } from '../../model/json.ts';
import { toolToCanonical } from '../../model/tool.ts';
import { renamedKeys, typedTool } from '../native-values.ts';

/** The canonical form of a call; a name Hermes does not use passes as it is (a canonical one is typed). */
function canonical(name: string, args: JsonObject): { name: string; input: JsonObject } | undefined {
  switch (name) {
    case 'read_file':
      return { name: 'Read', input: renamedKeys(args, { path: 'file_path' }) };
    case 'write_file':
      return { name: 'Write', input: renamedKeys(args, { path: 'file_path' }) };
    case 'patch': {
      if (args.mode !== 'replace') return undefined;
      const { mode: _mode, ...rest } = args;
      return { name: 'Edit', input: renamedKeys(rest, { path: 'file_path' }) };
    }
    case 'terminal': {
      const { timeout, ...rest } = args;
      const input = renamedKeys(rest, { background: 'run_in_background' });
      if (timeout !== undefined) {
        if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 0) return undefined;
        input.timeout_ms = timeout * 1000;
      }
      return { name: 'Bash', input };
    }
    default:
      return { name, input: args };
  }
}

export function commonToolToHermes(tool: Tool): { name: string; args: JsonValue } {
  if (tool.name === 'Raw') return { name: tool.tool_name, args: tool.input };
  const { name, input } = toolToCanonical(tool);
  const i = isJsonObject(input) ? input : {};
  switch (name) {
    case 'Read':
      return { name: 'read_file', args: renamedKeys(i, { file_path: 'path' }) };
    case 'Write':
      return { name: 'write_file', args: renamedKeys(i, { file_path: 'path' }) };
    case 'Edit':
      return { name: 'patch', args: { mode: 'replace', ...renamedKeys(i, { file_path: 'path' }) } };
    case 'Bash': {
      const { timeout_ms: ms, ...rest } = i;
      const args = renamedKeys(rest, { run_in_background: 'background' });
      // Hermes counts whole seconds: a timeout that is not one stays in milliseconds under Claude's name.
      if (typeof ms === 'number') {
        if (ms % 1000 === 0) args.timeout = ms / 1000;
        else return { name: 'Bash', args: input };
      }
      return { name: 'terminal', args };
    }
    default:
      return { name, args: input };
  }
}

export function hermesToolToCommon(name: string, args: JsonValue): Tool {
  if (isJsonObject(args)) {
    const c = canonical(name, args);
    const typed = c !== undefined ? typedTool(c.name, c.input) : undefined;
    if (typed !== undefined) {
      const back = commonToolToHermes(typed);
      if (back.name === name && jsonEqual(back.args, args)) return typed;
    }
  }
  return { name: 'Raw', tool_name: name, input: args };
}

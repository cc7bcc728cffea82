/**
 * Codex tool calls <-> Common tools. A shell call becomes `Bash` only when
 * the mapping back gives the same call:
 * - `shell` `{command: ["bash", "-lc", X], workdir?, timeout_ms?}` (plus the
 *   Claude-only `description` / `run_in_background` keys this codec itself
 *   writes) -> Bash `X`;
 * - `shell_command` `{command: X, workdir?, timeout_ms?}` and `exec_command`
 *   `{cmd: X, workdir?}` -> Bash `X` (they run X in a login shell too);
 * - a `local_shell_call` exec action `["bash", "-lc", X]` -> Bash `X`.
 * Any other argv (`["zsh", "-c", …]`, a bare `["ls"]`), an unknown key, or
 * a wrong type stays Raw with the input untouched. Bash is always written
 * back as `shell` with `["bash", "-lc", X]`. Every other function name goes
 * through `toolFromCanonical`, so Claude-named tools (Read, Edit, …) written
 * by this codec come back typed. `apply_patch` stays Raw.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { isJsonObject } from '../../model/json.ts';
import { onlyKeys } from '../native-values.ts';

type BashTool = Extract<Tool, { name: 'Bash' }>;

function isBashLc(argv: JsonValue | undefined): argv is [string, string, string] {
  return (
    Array.isArray(argv) &&
    argv.length === 3 &&
    argv[0] === 'bash' &&
    argv[1] === '-lc' &&
    typeof argv[2] === 'string'
  );
}

/** Bash from canonical-keyed fields, only when every field has the canonical type. */
function bashFrom(command: string, rest: JsonObject): BashTool | undefined {
  const tool = toolFromCanonical('Bash', { command, ...rest });
  return tool.name === 'Bash' ? tool : undefined;
}

function shellToBash(name: string, args: JsonValue): BashTool | undefined {
  if (!isJsonObject(args)) return undefined;
  if (name === 'shell') {
    if (!onlyKeys(args, ['command', 'workdir', 'timeout_ms', 'description', 'run_in_background']))
      return undefined;
    if (!isBashLc(args.command)) return undefined;
    const { command, ...rest } = args;
    return bashFrom(command[2], rest);
  }
  if (name === 'shell_command') {
    if (!onlyKeys(args, ['command', 'workdir', 'timeout_ms']) || typeof args.command !== 'string')
      return undefined;
    const { command, ...rest } = args;
    return bashFrom(command, rest);
  }
  if (name === 'exec_command') {
    if (!onlyKeys(args, ['cmd', 'workdir']) || typeof args.cmd !== 'string') return undefined;
    const { cmd, ...rest } = args;
    return bashFrom(cmd, rest);
  }
  return undefined;
}

/** A `function_call`: name plus its parsed `arguments` (the raw string when it is not JSON). */
export function codexFunctionToCommon(name: string, args: JsonValue): Tool {
  const bash = shellToBash(name, args);
  if (bash !== undefined) return bash;
  if (
    name === 'shell' ||
    name === 'shell_command' ||
    name === 'exec_command' ||
    name === 'local_shell_call'
  ) {
    return { name: 'Raw', tool_name: name, input: args };
  }
  return toolFromCanonical(name, args);
}

/** A `local_shell_call` item's `action`. */
export function codexLocalShellToCommon(action: JsonValue): Tool {
  if (
    isJsonObject(action) &&
    action.type === 'exec' &&
    onlyKeys(action, ['type', 'command', 'working_directory', 'timeout_ms']) &&
    isBashLc(action.command)
  ) {
    const rest: JsonObject = {};
    if (action.working_directory !== undefined && action.working_directory !== null)
      rest.workdir = action.working_directory;
    if (action.timeout_ms !== undefined && action.timeout_ms !== null) rest.timeout_ms = action.timeout_ms;
    const bash = bashFrom(action.command[2], rest);
    if (bash !== undefined) return bash;
  }
  return { name: 'Raw', tool_name: 'local_shell_call', input: action };
}

export type CodexCall =
  | { item: 'function_call'; name: string; arguments: string }
  | { item: 'custom_tool_call'; name: string; input: string };

/** How a Common tool is written: Bash as `shell`; a Raw tool with text input as a freeform custom tool call. */
export function commonToolToCodex(tool: Tool): CodexCall {
  if (tool.name === 'Bash') {
    const { name: _name, command, ...rest } = tool;
    const args: JsonObject = { command: ['bash', '-lc', command] };
    for (const [k, v] of Object.entries(rest)) if (v !== undefined) args[k] = v;
    return { item: 'function_call', name: 'shell', arguments: JSON.stringify(args) };
  }
  const { name, input } = toolToCanonical(tool);
  if (tool.name === 'Raw' && typeof input === 'string') return { item: 'custom_tool_call', name, input };
  return { item: 'function_call', name, arguments: JSON.stringify(input) };
}

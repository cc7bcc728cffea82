/**
 * pi tool calls <-> Common tools. pi's built-in tools take `path` where the
 * Claude convention says `file_path`, `oldText` / `newText` for edits, and a
 * bash `timeout` in seconds. A call becomes a typed Common tool only when its
 * arguments map onto that tool exactly and back; anything else stays Raw
 * under its pi name, arguments untouched. Writing, a typed tool pi's schema
 * cannot express (an Edit with `replace_all`, a Bash with a `workdir`) keeps
 * its canonical name and input, which reading turns back into the same tool.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { onlyKeys, typedTool } from '../native-values.ts';

function editToCommon(args: JsonObject): Tool | undefined {
  if (typeof args.path !== 'string') return undefined;
  if (Array.isArray(args.edits)) {
    if (!onlyKeys(args, ['path', 'edits']) || args.edits.length === 0) return undefined;
    const edits: JsonObject[] = [];
    for (const e of args.edits) {
      if (!isJsonObject(e) || !onlyKeys(e, ['oldText', 'newText'])) return undefined;
      edits.push({ old_string: e.oldText ?? null, new_string: e.newText ?? null });
    }
    if (edits.length === 1) return typedTool('Edit', { file_path: args.path, ...edits[0]! });
    return typedTool('MultiEdit', { file_path: args.path, edits });
  }
  if (!onlyKeys(args, ['path', 'oldText', 'newText'])) return undefined;
  // The flat form of older pi releases; it is written back in the `edits` form.
  return typedTool('Edit', {
    file_path: args.path,
    old_string: args.oldText ?? null,
    new_string: args.newText ?? null,
  });
}

function bashToCommon(args: JsonObject): Tool | undefined {
  if (!onlyKeys(args, ['command', 'timeout'])) return undefined;
  const { timeout, ...rest } = args;
  if (timeout === undefined) return typedTool('Bash', rest);
  if (typeof timeout !== 'number' || !Number.isSafeInteger(timeout) || timeout <= 0) return undefined;
  return typedTool('Bash', { ...rest, timeout_ms: timeout * 1000 });
}

/** A pi `toolCall`'s name and arguments as a Common tool. */
export function piToolToCommon(name: string, args: JsonValue): Tool {
  let tool: Tool | undefined;
  if (isJsonObject(args)) {
    switch (name) {
      case 'read':
        if (onlyKeys(args, ['path', 'offset', 'limit']) && typeof args.path !== 'undefined') {
          const { path, ...rest } = args;
          tool = typedTool('Read', { file_path: path, ...rest });
        }
        break;
      case 'write':
        if (onlyKeys(args, ['path', 'content']))
          tool = typedTool('Write', { file_path: args.path ?? null, content: args.content ?? null });
        break;
      case 'edit':
        tool = editToCommon(args);
        break;
      case 'bash':
        tool = bashToCommon(args);
        break;
      default:
        // A canonical name this codec wrote (or a tool another harness named the Claude way).
        return toolFromCanonical(name, args);
    }
  } else if (!['read', 'write', 'edit', 'bash'].includes(name)) {
    return toolFromCanonical(name, args);
  }
  return tool ?? { name: 'Raw', tool_name: name, input: args };
}

/** The pi name and arguments of a Common tool (see the module comment). */
export function commonToolToPi(tool: Tool): { name: string; arguments: JsonValue } {
  switch (tool.name) {
    case 'Read': {
      const { name: _n, file_path, ...rest } = tool;
      const args: JsonObject = { path: file_path };
      for (const [k, v] of Object.entries(rest)) if (v !== undefined) args[k] = v;
      return { name: 'read', arguments: args };
    }
    case 'Write':
      return { name: 'write', arguments: { path: tool.file_path, content: tool.content } };
    case 'Edit':
      if (tool.replace_all === undefined)
        return {
          name: 'edit',
          arguments: {
            path: tool.file_path,
            edits: [{ oldText: tool.old_string, newText: tool.new_string }],
          },
        };
      break;
    case 'MultiEdit':
      if (tool.edits.length > 1 && tool.edits.every((e) => e.replace_all === undefined))
        return {
          name: 'edit',
          arguments: {
            path: tool.file_path,
            edits: tool.edits.map((e) => ({ oldText: e.old_string, newText: e.new_string })),
          },
        };
      break;
    case 'Bash': {
      const onlyCommand =
        tool.workdir === undefined && tool.description === undefined && tool.run_in_background === undefined;
      if (onlyCommand && tool.timeout_ms === undefined)
        return { name: 'bash', arguments: { command: tool.command } };
      if (onlyCommand && tool.timeout_ms !== undefined && tool.timeout_ms > 0 && tool.timeout_ms % 1000 === 0)
        return { name: 'bash', arguments: { command: tool.command, timeout: tool.timeout_ms / 1000 } };
      break;
    }
    case 'Command':
    case 'Raw':
      break;
  }
  const { name, input } = toolToCanonical(tool);
  return { name, arguments: input };
}

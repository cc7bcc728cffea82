/**
 * Antigravity's tool vocabulary against the canonical tools
 * (docs/formats/antigravity.md): `run_command` is Bash (`CommandLine`,
 * `Cwd`, and the CLI's constant `WaitMsBeforeAsync: 2000`), `view_file` is
 * Read (`AbsolutePath`, 1-based inclusive `StartLine`/`EndLine`),
 * `write_to_file` is Write (`TargetFile`, `CodeContent`, `Overwrite: true`)
 * and `replace_file_content` is Edit (`TargetFile`, `TargetContent`,
 * `ReplacementContent`, `AllowMultiple`).
 *
 * A call is typed only when mapping it back gives the very arguments
 * Antigravity wrote; any other call (display keys such as `toolSummary`,
 * another tool) keeps its own name and arguments. A canonical tool that has
 * no exact native form is written under its canonical name and input, which
 * reads back as the same tool.
 */
import type { JsonObject, JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject, jsonEqual } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { onlyKeys } from '../native-values.ts';

export interface NativeCall {
  name: string;
  args: JsonValue;
}

/** The Bash wait the CLI stamps on every command before it goes to the background. */
const WAIT_MS = 2000;

const isCount = (v: JsonValue | undefined): v is number =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function typedOf(name: string, a: JsonObject): Tool | undefined {
  switch (name) {
    case 'run_command': {
      if (typeof a.CommandLine !== 'string' || a.WaitMsBeforeAsync !== WAIT_MS) return undefined;
      if (a.Cwd !== undefined && typeof a.Cwd !== 'string') return undefined;
      if (!onlyKeys(a, ['CommandLine', 'Cwd', 'WaitMsBeforeAsync'])) return undefined;
      return { name: 'Bash', command: a.CommandLine, ...(a.Cwd !== undefined ? { workdir: a.Cwd } : {}) };
    }
    case 'view_file': {
      if (typeof a.AbsolutePath !== 'string' || !onlyKeys(a, ['AbsolutePath', 'StartLine', 'EndLine']))
        return undefined;
      const start = a.StartLine;
      const end = a.EndLine;
      if ((start !== undefined && !isCount(start)) || (end !== undefined && !isCount(end))) return undefined;
      const tool: Tool = { name: 'Read', file_path: a.AbsolutePath };
      if (start !== undefined) tool.offset = start;
      if (end !== undefined) {
        if (start !== undefined && end < start) return undefined;
        tool.limit = start === undefined ? end : end - start + 1;
      }
      return tool;
    }
    case 'write_to_file':
      if (typeof a.TargetFile !== 'string' || typeof a.CodeContent !== 'string' || a.Overwrite !== true)
        return undefined;
      if (!onlyKeys(a, ['TargetFile', 'CodeContent', 'Overwrite'])) return undefined;
      return { name: 'Write', file_path: a.TargetFile, content: a.CodeContent };
    case 'replace_file_content': {
      const keys = ['TargetFile', 'TargetContent', 'ReplacementContent', 'AllowMultiple'];
      if (!onlyKeys(a, keys)) return undefined;
      const { TargetFile: file, TargetContent: before, ReplacementContent: after } = a;
      if (typeof file !== 'string' || typeof before !== 'string' || typeof after !== 'string')
        return undefined;
      if (a.AllowMultiple !== undefined && a.AllowMultiple !== true) return undefined;
      return {
        name: 'Edit',
        file_path: file,
        old_string: before,
        new_string: after,
        ...(a.AllowMultiple === true ? { replace_all: true } : {}),
      };
    }
  }
  return undefined;
}

function nativeOf(tool: Tool): NativeCall | undefined {
  switch (tool.name) {
    case 'Bash':
      return {
        name: 'run_command',
        args: {
          CommandLine: tool.command,
          WaitMsBeforeAsync: WAIT_MS,
          ...(tool.workdir !== undefined ? { Cwd: tool.workdir } : {}),
        },
      };
    case 'Read': {
      const args: JsonObject = { AbsolutePath: tool.file_path };
      if (tool.offset !== undefined) args.StartLine = tool.offset;
      // EndLine is inclusive: the last line read.
      if (tool.limit !== undefined) args.EndLine = (tool.offset ?? 1) - 1 + tool.limit;
      return { name: 'view_file', args };
    }
    case 'Write':
      return {
        name: 'write_to_file',
        args: { TargetFile: tool.file_path, CodeContent: tool.content, Overwrite: true },
      };
    case 'Edit':
      return {
        name: 'replace_file_content',
        args: {
          TargetFile: tool.file_path,
          TargetContent: tool.old_string,
          ReplacementContent: tool.new_string,
          ...(tool.replace_all === true ? { AllowMultiple: true } : {}),
        },
      };
    case 'Command':
    case 'MultiEdit':
    case 'Raw':
      return undefined;
  }
}

const sameTool = (a: Tool, b: Tool): boolean => {
  const x = toolToCanonical(a);
  const y = toolToCanonical(b);
  return x.name === y.name && jsonEqual(x.input, y.input);
};

/** A native call as a Common tool: typed when exact, else read as a canonical name and input (Raw when it is none). */
export function antigravityToolToCommon(name: string, args: JsonValue): Tool {
  const typed = isJsonObject(args) ? typedOf(name, args) : undefined;
  if (typed !== undefined) {
    const back = nativeOf(typed);
    if (back !== undefined && back.name === name && jsonEqual(back.args, args)) return typed;
  }
  return toolFromCanonical(name, args);
}

/** A Common tool as a native call: its Antigravity form when that reads back as the same tool, else its canonical name and input. */
export function commonToolToAntigravity(tool: Tool): NativeCall {
  const native = nativeOf(tool);
  if (native !== undefined && isJsonObject(native.args)) {
    const back = typedOf(native.name, native.args);
    if (back !== undefined && sameTool(back, tool)) return native;
  }
  const { name, input } = toolToCanonical(tool);
  return { name, args: input };
}

/**
 * Cursor's tool vocabulary against the canonical tools: `Shell` is Bash
 * (`cwd` its `workdir`), `StrReplace` is Edit (`oldString`/`newString` in
 * some versions), and a `path` or `filePath` is a `file_path`; `Read` and
 * `Write` keep their names. A call is typed only when the renamed input fits
 * the canonical tool exactly; any other call stays `Raw` under its own name
 * and keys, so nothing is renamed that cannot be renamed back.
 */
import type { JsonValue, Tool } from '../../model/common.ts';
import { isJsonObject, jsonEqual } from '../../model/json.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { renamedKeys } from '../native-values.ts';

const TO_CANONICAL: Record<string, string> = { Shell: 'Bash', StrReplace: 'Edit' };
const FROM_CANONICAL: Record<string, string> = { Bash: 'Shell', Edit: 'StrReplace' };

const KEYS_IN: Record<string, Record<string, string>> = {
  Bash: { cwd: 'workdir' },
  Edit: { path: 'file_path', filePath: 'file_path', oldString: 'old_string', newString: 'new_string' },
  Read: { path: 'file_path', filePath: 'file_path' },
  Write: { path: 'file_path', filePath: 'file_path' },
};
const KEYS_OUT: Record<string, Record<string, string>> = {
  Bash: { workdir: 'cwd' },
  Edit: { file_path: 'path' },
  Read: { file_path: 'path' },
  Write: { file_path: 'path' },
};

export function cursorToolToCommon(name: string, args: JsonValue): Tool {
  const canonical = TO_CANONICAL[name] ?? name;
  const keys = KEYS_IN[canonical];
  if (keys !== undefined && isJsonObject(args)) {
    const typed = toolFromCanonical(canonical, renamedKeys(args, keys));
    // Typed only when renaming back gives the very input Cursor wrote.
    if (typed.name !== 'Raw' && jsonEqual(commonToolToCursor(typed).args, args)) return typed;
  }
  return { name: 'Raw', tool_name: name, input: args };
}

export function commonToolToCursor(tool: Tool): { name: string; args: JsonValue } {
  if (tool.name === 'Raw') return { name: tool.tool_name, args: tool.input };
  const { name, input } = toolToCanonical(tool);
  const keys = KEYS_OUT[name];
  return {
    name: FROM_CANONICAL[name] ?? name,
    args: keys !== undefined && isJsonObject(input) ? renamedKeys(input, keys) : input,
  };
}

/**
 * The tools of a continued session, named as the box's own. A Claude Code, Codex, OpenCode, pi or
 * Grok CLI session called `Grep`, `TodoWrite`, `apply_patch`…; the box's agent has `grep`,
 * `update_todos`, `edit`…, and a model that sees its history call tools it does not have tends to
 * call them again. Each foreign tool with a box counterpart is renamed (and its path key renamed to
 * the box's `path`); what has no counterpart keeps its name. The one table of the mapping is BOX_TOOL.
 */
import type { Block, JsonObject, JsonValue, Tool, Transcript } from '../model/common.ts';
import { toolToCanonical } from '../model/tool.ts';

/** Tool names of other harnesses -> the box's tool (packages/box/src/tools/<name>). */
export const BOX_TOOL: Readonly<Record<string, string>> = {
  // shell
  Bash: 'shell',
  bash: 'shell',
  Shell: 'shell',
  exec_command: 'shell',
  run_terminal_cmd: 'shell',
  local_shell: 'shell',
  // read
  Read: 'read',
  read_file: 'read',
  view_image: 'read',
  NotebookRead: 'read',
  // write, edit, delete
  Write: 'write',
  write_file: 'write',
  Edit: 'edit',
  MultiEdit: 'edit',
  StrReplace: 'edit',
  str_replace: 'edit',
  apply_patch: 'edit',
  NotebookEdit: 'edit',
  Delete: 'delete',
  delete_file: 'delete',
  // search the files
  Grep: 'grep',
  grep_search: 'grep',
  Glob: 'glob',
  file_search: 'glob',
  LS: 'ls',
  list: 'ls',
  list_dir: 'ls',
  // the web
  WebFetch: 'web_fetch',
  webfetch: 'web_fetch',
  fetch: 'web_fetch',
  WebSearch: 'web_search',
  websearch: 'web_search',
  web_search_preview: 'web_search',
  // the todo list
  TodoWrite: 'update_todos',
  todowrite: 'update_todos',
  update_plan: 'update_todos',
};

/** `file_path` (or `notebook_path`) renamed to the box's `path`, when the input has no `path` of its own. */
function withPath(input: JsonValue): JsonValue {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || 'path' in input) return input;
  const key = 'file_path' in input ? 'file_path' : 'notebook_path' in input ? 'notebook_path' : undefined;
  if (key === undefined) return input;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(input)) out[k === key ? 'path' : k] = v;
  return out;
}

/** `tool` as the box's tool of the same use, or unchanged when the box has none (or it is the box's). */
export function toBoxTool(tool: Tool): Tool {
  const { name, input } = toolToCanonical(tool);
  const box = BOX_TOOL[name];
  if (box === undefined || box === name) return tool;
  // Bash, Read and Edit are typed in Common and become shell, read and edit in Grok Bot's own
  // records already (grok-bot/codec.ts toolToNative).
  if (tool.name === 'Bash' || tool.name === 'Read' || tool.name === 'Edit') return tool;
  return { name: 'Raw', tool_name: box, input: withPath(input) };
}

/** `transcript` with every tool call renamed by toBoxTool. */
export function withBoxTools(transcript: Transcript): Transcript {
  let changed = false;
  const messages = transcript.messages.map((message) => {
    let own = false;
    const content = message.content.map((block): Block => {
      if (block.type !== 'tool_use') return block;
      const tool = toBoxTool(block.tool);
      if (tool === block.tool) return block;
      own = true;
      return { ...block, tool };
    });
    if (!own) return message;
    changed = true;
    return { ...message, content };
  });
  return changed ? { ...transcript, messages } : transcript;
}

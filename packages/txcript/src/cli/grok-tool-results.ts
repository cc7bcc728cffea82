/**
 * How the results of Grok Bot's work tools read in `txcript view` (docs/formats/grok-bot.md,
 * "Work tools"): an edit's diff, grep's `path:line: text` lines, glob's and ls's paths, web
 * search references, a fetched page's title and text, a todo list, and an image as a one-line
 * note instead of its base64. Undefined: the generic reading (view.ts `resultText`).
 */
import type { JsonValue, ToolOutput } from '../model/common.ts';
import { isJsonObject as isObject } from '../model/json.ts';

type Obj = { [key: string]: JsonValue };

const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const num = (v: JsonValue | undefined): string => (typeof v === 'number' ? String(v) : '?');

export function grokToolResultText(tool: string | undefined, content: ToolOutput): string | undefined {
  if (!isObject(content) || !isObject(content.success)) return undefined;
  const s = content.success;
  if (typeof s.imageData === 'string') {
    const kb = Math.round((s.imageData.length * 3) / 4 / 1024);
    const size = typeof s.width === 'number' ? `, ${s.width}×${num(s.height)}` : '';
    return `[image: ${str(s.mediaType) || 'image'}${size}, ${kb} KB${s.path ? ` from ${str(s.path)}` : ''}]`;
  }
  switch (tool) {
    case 'edit':
    case 'Edit':
      return typeof s.diffString === 'string'
        ? `${typeof s.replacements === 'number' ? s.replacements : 1} replacement(s), +${num(s.linesAdded)} -${num(s.linesRemoved)}\n${s.diffString}`
        : undefined;
    case 'grep':
      return grepLines(s);
    case 'glob':
      return list(s.files).map(str).join('\n') || '(no files)';
    case 'ls':
      return lsLines(s);
    case 'web_search':
      return (
        list(s.references)
          .filter(isObject)
          .map(
            (r) => `${str(r.title)}${r.url ? ` <${str(r.url)}>` : ''}${r.chunk ? ` — ${str(r.chunk)}` : ''}`,
          )
          .join('\n') || '(no results)'
      );
    case 'web_fetch':
      return `${str(s.title) || str(s.url)}\n${str(s.content)}`;
    case 'update_todos':
      return list(s.todos)
        .filter(isObject)
        .map(
          (t) =>
            `[${t.status === 'completed' ? 'x' : t.status === 'in_progress' ? '~' : ' '}] ${str(t.content)}`,
        )
        .join('\n');
    case undefined:
    default:
      return undefined;
  }
}

function grepLines(s: Obj): string | undefined {
  if (!isObject(s.workspaceResults)) return undefined;
  const lines: string[] = [];
  for (const workspace of Object.values(s.workspaceResults)) {
    const content = isObject(workspace) && isObject(workspace.content) ? workspace.content : null;
    if (!content) continue;
    for (const file of list(content.matches).filter(isObject))
      for (const m of list(file.matches).filter(isObject))
        lines.push(`${str(file.file)}:${num(m.lineNumber)}: ${str(m.content)}`);
  }
  return lines.join('\n') || '(no matches)';
}

function lsLines(s: Obj): string | undefined {
  const root = s.directoryTreeRoot;
  if (!isObject(root)) return undefined;
  const dirs = list(root.childrenDirs)
    .filter(isObject)
    .map((d) => `${str(d.absPath).split('/').at(-1) ?? ''}/`);
  const files = list(root.childrenFiles)
    .filter(isObject)
    .map((f) => `${str(f.name)}${f.type ? ` (${str(f.type)})` : ''}`);
  return [...dirs, ...files].join('\n') || '(empty folder)';
}

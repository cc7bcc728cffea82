/**
 * `grep`: a regex search below a folder of the sandbox with ripgrep (Debian's `rg`), run confined
 * like `shell` (sandbox/confinement.ts): the search sees the sandbox folder and the system folders
 * only. ripgrep never follows a link, skips binary files, hidden files and what .gitignore
 * excludes. The first `max_results` matches are kept; the rest are only counted. On disk it is
 * Cursor's grep shape, `outputMode: "content"` (docs/formats/grok-bot.md, "Work tools"); the model
 * reads `path:line: text` lines and how many matches were left out.
 */
import type { JsonValue } from '@sendbox/txcript';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { quoteForBash, type Confinement, type LaunchSpec } from '../../sandbox/confinement.ts';
import { runConfined } from '../../sandbox/confined-run.ts';
import { folderInSandbox, openInSandbox, withDeadline } from '../../sandbox/paths.ts';
import {
  defineTool,
  errorOutcome,
  isJsonObject,
  jsonArray,
  successFields,
  type ToolOutcome,
} from '../types.ts';

export const DEFAULT_GREP_RESULTS = 100;
export const MAX_GREP_RESULTS = 1000;
export const GREP_TIMEOUT_MS = 60_000;
/** Longest line kept per match; ripgrep shows a preview of longer ones. */
const MAX_COLUMNS = 400;

export const grepInput = z.strictObject({
  pattern: z.string().min(1, 'pattern must not be empty').describe('Regular expression (Rust regex syntax).'),
  path: z
    .string()
    .optional()
    .describe('File or folder to search, relative to your sandbox folder (default: all of it).'),
  glob: z
    .string()
    .optional()
    .describe('Only files whose path matches this glob, e.g. "*.ts" or "src/**/*.py".'),
  ignore_case: z.boolean().optional(),
  max_results: z
    .number()
    .int()
    .positive()
    .max(MAX_GREP_RESULTS)
    .optional()
    .describe(`Matching lines to return (default ${DEFAULT_GREP_RESULTS}, at most ${MAX_GREP_RESULTS}).`),
});

export interface GrepOptions {
  confinement: Confinement;
  /** The ripgrep binary (default `rg` on PATH). */
  rg?: string;
  timeoutMs?: number;
}

interface LineMatch {
  file: string;
  lineNumber: number;
  content: string;
  contentTruncated: boolean;
}

export function grepTool(options: GrepOptions) {
  return defineTool({
    name: 'grep',
    description:
      'Search file contents in your sandbox folder with a regular expression (ripgrep). Returns path:line: text ' +
      'lines. Binary, hidden and .gitignored files are skipped. Narrow with path and glob.',
    input: grepInput,
    async run(input, ctx): Promise<ToolOutcome> {
      const requested = input.path ?? '.';
      let target: string;
      try {
        target = await withDeadline(`Finding ${requested}`, () => searchTarget(ctx.sandboxDir, requested));
      } catch (error) {
        return errorOutcome(ctx.scrub.text((error as Error).message));
      }
      const max = input.max_results ?? DEFAULT_GREP_RESULTS;
      const args = [
        '--json',
        '--no-config',
        '--max-columns',
        String(MAX_COLUMNS),
        '--max-columns-preview',
        ...(input.ignore_case ? ['--ignore-case'] : []),
        ...(input.glob ? ['--glob', input.glob] : []),
        '--regexp',
        input.pattern,
        '--',
        target,
      ];
      const spec = options.confinement.launch({
        command: [options.rg ?? 'rg', ...args].map(quoteForBash).join(' '),
        sandboxDir: ctx.sandboxDir,
        cwd: ctx.sandboxDir,
        env: { PATH: ctx.env.PATH ?? '/usr/bin:/bin' },
      });
      if ('refused' in spec) return errorOutcome(spec.refused.replace('The shell tool', 'grep (and shell)'));
      const run = await runSearch(
        spec,
        ctx.sandboxDir,
        max,
        options.timeoutMs ?? GREP_TIMEOUT_MS,
        ctx.signal,
      );
      if (run.failure) return errorOutcome(ctx.scrub.text(run.failure));
      const byFile = new Map<string, JsonValue[]>();
      for (const m of run.kept) {
        const list = byFile.get(m.file) ?? [];
        list.push({
          lineNumber: m.lineNumber,
          content: ctx.scrub.text(m.content),
          contentTruncated: m.contentTruncated,
          isContextLine: false,
        });
        byFile.set(m.file, list);
      }
      const matches: JsonValue[] = [...byFile].map(([file, lines]) => ({
        file: ctx.scrub.text(file),
        matches: lines,
      }));
      return {
        envelope: {
          success: {
            pattern: input.pattern,
            path: requested,
            outputMode: 'content',
            workspaceResults: {
              [ctx.sandboxDir]: {
                content: {
                  matches,
                  totalLines: run.kept.length,
                  totalMatchedLines: run.total,
                  clientTruncated: run.total > run.kept.length,
                  ripgrepTruncated: false,
                },
              },
            },
          },
        },
        summary: `${input.pattern}: ${run.total} match${run.total === 1 ? '' : 'es'}`,
      };
    },
    modelOutput(result) {
      const success = successFields(result);
      if (!success || !isJsonObject(success.workspaceResults)) return undefined;
      const lines: string[] = [];
      let shown = 0;
      let total = 0;
      for (const workspace of Object.values(success.workspaceResults)) {
        const content = isJsonObject(workspace) ? workspace.content : undefined;
        if (!isJsonObject(content)) continue;
        total += typeof content.totalMatchedLines === 'number' ? content.totalMatchedLines : 0;
        for (const file of jsonArray(content.matches)) {
          if (!isJsonObject(file) || typeof file.file !== 'string') continue;
          for (const line of jsonArray(file.matches)) {
            if (!isJsonObject(line)) continue;
            lines.push(
              `${file.file}:${JSON.stringify(line.lineNumber)}: ${typeof line.content === 'string' ? line.content : ''}`,
            );
            shown += 1;
          }
        }
      }
      if (total === 0) return { type: 'text', value: `No matches for ${JSON.stringify(success.pattern)}.` };
      const left = total - shown;
      return {
        type: 'text',
        value: `${lines.join('\n')}${left > 0 ? `\n… ${left} more matching lines left out; narrow the search with path or glob, or raise max_results.` : ''}`,
      };
    },
  });
}

/** The searched path relative to the sandbox, after checking it is a folder or a regular file reached without links. */
async function searchTarget(sandboxDir: string, requested: string): Promise<string> {
  const folder = await folderInSandbox(sandboxDir, requested).catch(() => null);
  const absolute = folder ?? (await fileInSandbox(sandboxDir, requested));
  const rel = path.relative(await folderInSandbox(sandboxDir, '.'), absolute);
  return rel === '' ? '.' : rel;
}

async function fileInSandbox(sandboxDir: string, requested: string): Promise<string> {
  const { handle, path: file } = await openInSandbox(sandboxDir, requested);
  await handle.close();
  // Checked again by type here: a file opened above is searched by its path.
  if (!(await lstat(file)).isFile()) throw new Error(`${requested} changed while it was checked; try again.`);
  return file;
}

interface SearchRun {
  kept: LineMatch[];
  total: number;
  failure?: string;
}

/** Runs the confined ripgrep and reads its JSON lines as they come: `max` kept, all counted. */
async function runSearch(
  spec: LaunchSpec,
  cwd: string,
  max: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SearchRun> {
  const kept: LineMatch[] = [];
  let total = 0;
  let stderr = '';
  let partial = '';
  // A chunk can end inside a multi-byte character: the decoder holds its first bytes for the next.
  const decoder = new StringDecoder('utf8');
  const onLine = (line: string) => {
    if (!line.startsWith('{"type":"match"')) return;
    total += 1;
    if (kept.length >= max) return;
    const match = parseMatch(line);
    if (match) kept.push(match);
  };
  const run = await runConfined(spec, {
    cwd,
    timeoutMs,
    signal,
    onStdout: (chunk) => {
      const lines = (partial + decoder.write(chunk)).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    },
    onStderr: (chunk) => {
      if (stderr.length < 4000) stderr += chunk.toString('utf8');
    },
  });
  onLine(partial + decoder.end());
  // ripgrep: 0 found, 1 nothing found, 2 an error (but matches may still have been found).
  let failure: string | undefined;
  if (run.spawnError) failure = `grep could not start ripgrep: ${run.spawnError}. Is ripgrep (rg) installed?`;
  else if (run.timedOut)
    failure = `grep did not finish within ${timeoutMs / 1000} s; search a smaller folder with path or glob.`;
  else if (run.exitCode === 2 && total === 0) failure = `grep failed: ${firstError(stderr)}`;
  else if (run.exitCode === 127)
    failure = 'grep could not run ripgrep (rg): it is not installed on this box. Tell the operator.';
  return { kept, total, ...(failure ? { failure } : {}) };
}

function parseMatch(line: string): LineMatch | null {
  try {
    const event = JSON.parse(line) as {
      data?: { path?: RgText; lines?: RgText; line_number?: number };
    };
    const data = event.data;
    if (!data?.path || typeof data.line_number !== 'number') return null;
    const content = textOf(data.lines).replace(/\r?\n$/, '');
    return {
      file: textOf(data.path).replace(/^\.\//, ''),
      lineNumber: data.line_number,
      content,
      contentTruncated: content.includes('[... omitted end of long line]'),
    };
  } catch {
    return null;
  }
}

type RgText = { text?: string; bytes?: string } | undefined;

/** ripgrep gives text, or base64 bytes when it is not valid UTF-8. */
function textOf(value: RgText): string {
  if (value?.text !== undefined) return value.text;
  return value?.bytes ? Buffer.from(value.bytes, 'base64').toString('utf8') : '';
}

/** ripgrep's error, minus its own program name, for the model (a bad regex says where). */
function firstError(stderr: string): string {
  const text = stderr.trim().replace(/^rg: /gm, '');
  return text.length > 1500 ? `${text.slice(0, 1500)}…` : text || 'ripgrep exited with an error';
}

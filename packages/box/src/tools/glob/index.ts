/**
 * `glob`: paths below a folder of the sandbox that match a glob pattern (`**` any folders, `*`,
 * `?`, `{a,b}`, `[ab]`), newest first, capped. The walk never follows a link (a link is matched
 * by its own name, not walked into) and stops at a number of entries and a deadline. On disk it is
 * Cursor's glob shape (docs/formats/grok-bot.md, "Work tools"): `{pattern, path, files,
 * totalFiles, clientTruncated}`.
 */
import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { folderInSandbox, withDeadline } from '../../sandbox/paths.ts';
import { defineTool, errorOutcome, jsonArray, successFields, type ToolOutcome } from '../types.ts';

export const GLOB_CAP_FILES = 200;
/** Entries the walk looks at before it stops (a sandbox with a huge node_modules). */
export const GLOB_WALK_LIMIT = 200_000;

export const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1, 'pattern must not be empty')
    .describe('Glob pattern, relative to path: e.g. "**/*.ts", "src/*.json", "*.{png,jpg}".'),
  path: z
    .string()
    .optional()
    .describe('Folder to search, relative to your sandbox folder (default: all of it).'),
});

export const globTool = defineTool({
  name: 'glob',
  description:
    'Find files in your sandbox folder by glob pattern ("**/*.py", "docs/*.md"). Returns matching paths, newest first.',
  input: globInput,
  async run(input, ctx): Promise<ToolOutcome> {
    const requested = input.path ?? '.';
    try {
      return await withDeadline(`Searching ${requested} for ${input.pattern}`, async () => {
        const base = await folderInSandbox(ctx.sandboxDir, requested);
        const found = await walk(base, input.pattern);
        found.matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.rel < b.rel ? -1 : 1));
        const files = found.matches.slice(0, GLOB_CAP_FILES).map((m) => ctx.scrub.text(m.rel));
        return {
          envelope: {
            success: {
              pattern: input.pattern,
              path: base,
              files,
              totalFiles: found.matches.length,
              clientTruncated: found.matches.length > files.length,
              ...(found.stoppedEarly ? { walkStoppedAfter: GLOB_WALK_LIMIT } : {}),
            },
          },
          summary: `${input.pattern}: ${found.matches.length} match${found.matches.length === 1 ? '' : 'es'}`,
        };
      });
    } catch (error) {
      return errorOutcome(ctx.scrub.text((error as Error).message));
    }
  },
  modelOutput(result) {
    const success = successFields(result);
    if (!success) return undefined;
    const files = jsonArray(success.files).filter((f) => typeof f === 'string');
    const total = typeof success.totalFiles === 'number' ? success.totalFiles : files.length;
    const lines = files.length ? files.join('\n') : `No files match ${JSON.stringify(success.pattern)}.`;
    const left =
      total > files.length
        ? `\n… ${total - files.length} more matches not shown (newest first); narrow the pattern.`
        : '';
    const stopped =
      typeof success.walkStoppedAfter === 'number'
        ? `\nThe search stopped after ${success.walkStoppedAfter} entries; search a smaller folder with path.`
        : '';
    return { type: 'text', value: `${lines}${left}${stopped}` };
  },
});

interface Match {
  rel: string;
  mtimeMs: number;
}

async function walk(base: string, pattern: string): Promise<{ matches: Match[]; stoppedEarly: boolean }> {
  const matches: Match[] = [];
  let seen = 0;
  const folders = [''];
  while (folders.length > 0) {
    const rel = folders.pop()!;
    const dir = await opendir(path.join(base, rel)).catch(() => null);
    if (dir === null) continue; // gone or unreadable meanwhile
    for await (const entry of dir) {
      if (++seen > GLOB_WALK_LIMIT) return { matches, stoppedEarly: true };
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      // Dirent types come from the folder itself: a link is a link, never its target.
      if (entry.isDirectory()) folders.push(child);
      if (path.matchesGlob(child, pattern)) {
        const info = await lstat(path.join(base, child)).catch(() => null);
        if (info) matches.push({ rel: entry.isDirectory() ? `${child}/` : child, mtimeMs: info.mtimeMs });
      }
    }
  }
  return { matches, stoppedEarly: false };
}

/**
 * `ls`: the entries of one folder of the sandbox, each with its type and (files) size. The folder
 * is reached without following a link, and entries are read with lstat: a link is listed as a
 * link, never followed. On disk it is Cursor's `directoryTreeRoot`, one level deep
 * (docs/formats/grok-bot.md, "Work tools"), files carrying sendbox's `size`, and entries that are
 * neither file nor folder a `type`.
 */
import type { JsonValue } from '@sendbox/txcript';
import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { folderInSandbox, withDeadline } from '../../sandbox/paths.ts';
import {
  defineTool,
  errorOutcome,
  isJsonObject as isObject,
  jsonArray as asArray,
  successFields,
  type ToolOutcome,
} from '../types.ts';

export const LS_CAP_ENTRIES = 1000;

export const lsInput = z.strictObject({
  path: z
    .string()
    .optional()
    .describe('Folder, relative to your sandbox folder (default: the sandbox folder).'),
});

type EntryType = 'file' | 'folder' | 'symbolic link' | 'named pipe' | 'socket' | 'device' | 'other';

export const lsTool = defineTool({
  name: 'ls',
  description:
    'List a folder of your sandbox: each entry with its type (file, folder, symbolic link...) and file size.',
  input: lsInput,
  async run(input, ctx): Promise<ToolOutcome> {
    const requested = input.path ?? '.';
    try {
      return await withDeadline(`Listing ${requested}`, async () => {
        const dir = await folderInSandbox(ctx.sandboxDir, requested);
        const names = (await readdir(dir)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const shown = names.slice(0, LS_CAP_ENTRIES);
        const childrenDirs: JsonValue[] = [];
        const childrenFiles: JsonValue[] = [];
        for (const name of shown) {
          const info = await lstat(path.join(dir, name)).catch(() => null);
          if (info === null) continue; // removed meanwhile
          const type = typeOf(info);
          if (type === 'folder') {
            childrenDirs.push({
              absPath: path.join(dir, name),
              childrenDirs: [],
              childrenFiles: [],
              childrenWereProcessed: false,
            });
          } else {
            childrenFiles.push({
              name: ctx.scrub.text(name),
              size: info.size,
              ...(type === 'file' ? {} : { type }),
            });
          }
        }
        const left = names.length - shown.length;
        return {
          envelope: {
            success: {
              directoryTreeRoot: {
                absPath: dir,
                childrenDirs,
                childrenFiles,
                childrenWereProcessed: true,
                numFiles: childrenFiles.length,
                ...(left > 0 ? { entriesLeftOut: left } : {}),
              },
            },
          },
          summary: `${requested}: ${names.length} entr${names.length === 1 ? 'y' : 'ies'}`,
        };
      });
    } catch (error) {
      return errorOutcome(ctx.scrub.text((error as Error).message));
    }
  },
  modelOutput(result) {
    const root = successFields(result)?.directoryTreeRoot;
    if (!isObject(root)) return undefined;
    const lines: string[] = [];
    for (const dir of asArray(root.childrenDirs)) {
      if (isObject(dir) && typeof dir.absPath === 'string')
        lines.push(`${path.basename(dir.absPath)}/  folder`);
    }
    for (const file of asArray(root.childrenFiles)) {
      if (!isObject(file) || typeof file.name !== 'string') continue;
      const type = typeof file.type === 'string' ? file.type : 'file';
      const size = type === 'file' && typeof file.size === 'number' ? `, ${file.size} bytes` : '';
      const note = type === 'symbolic link' ? ' (not followed)' : '';
      lines.push(`${file.name}  ${type}${size}${note}`);
    }
    const where = typeof root.absPath === 'string' ? root.absPath : '';
    const left =
      typeof root.entriesLeftOut === 'number' ? `\n… ${root.entriesLeftOut} more entries not shown` : '';
    return { type: 'text', value: `${where}:\n${lines.join('\n') || '(empty folder)'}${left}` };
  },
});

function typeOf(info: Stats): EntryType {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'folder';
  if (info.isSymbolicLink()) return 'symbolic link';
  if (info.isFIFO()) return 'named pipe';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'device';
  return 'other';
}

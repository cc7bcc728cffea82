/**
 * Amp threads on disk: `<threads>/T-<uuid>.json`, one document per thread.
 * The folder is `$AMP_THREADS_DIR`, else `$XDG_DATA_HOME/amp/threads`, else
 * `~/.local/share/amp/threads`. Read-only: current Amp keeps threads on its
 * server and neither reads nor writes this folder, so a thread written here
 * could never be resumed (docs/formats/amp.md); there is no `save`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { entryPath, readDirSafe } from '../../fs/dir.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { assertSafeSessionId } from '../session-id.ts';
import {
  openSessionFileCache,
  summarizeSessionFiles,
  type FileScan,
  type SessionFileCacheOptions,
} from '../session-files.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SessionSummary,
  Store,
  Warning,
} from '../types.ts';

const HARNESS = 'amp';

export function ampThreadsDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = envValue(env, 'AMP_THREADS_DIR');
  if (explicit !== undefined) return explicit;
  const data = envValue(env, 'XDG_DATA_HOME') ?? path.join(homeDir(env), '.local', 'share');
  return path.join(data, 'amp', 'threads');
}

async function threadFiles(root: string): Promise<string[]> {
  return (await readDirSafe(root))
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => entryPath(root, e.name));
}

function firstText(m: JsonObject): string | undefined {
  const content = m.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  for (const b of content)
    if (isJsonObject(b) && b.type === 'text' && typeof b.text === 'string') return b.text;
  return undefined;
}

/** One thread's summary: its id, title, conversation messages and last time. */
async function summarize(file: string): Promise<FileScan | string> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    return `not JSON (${(e as Error).message}); not listed. Fix or move the file if it is an Amp thread`;
  }
  // `v`, Amp's revision counter, is what marks a thread among other JSON.
  if (
    !isJsonObject(json) ||
    typeof json.v !== 'number' ||
    typeof json.id !== 'string' ||
    !Array.isArray(json.messages)
  )
    return 'not an Amp thread (it needs "v", a string "id" and a "messages" array); not listed';
  let count = 0;
  let last = typeof json.created === 'number' ? json.created : undefined;
  let prompt: string | undefined;
  for (const m of json.messages) {
    if (!isJsonObject(m) || (m.role !== 'user' && m.role !== 'assistant')) continue;
    count++;
    const sent = isJsonObject(m.meta) && typeof m.meta.sentAt === 'number' ? m.meta.sentAt : undefined;
    const stamped =
      isJsonObject(m.usage) && typeof m.usage.timestamp === 'string' ? Date.parse(m.usage.timestamp) : NaN;
    const at = sent ?? (Number.isNaN(stamped) ? undefined : stamped);
    if (at !== undefined && (last === undefined || at > last)) last = at;
    if (prompt === undefined && m.role === 'user' && sent !== undefined) prompt = firstText(m);
  }
  const title =
    (typeof json.title === 'string' && json.title.trim() !== '' ? json.title.trim() : undefined) ??
    (prompt !== undefined ? titleFromText(prompt) : undefined);
  const lastActivity = last !== undefined ? normalizeTimestamp(new Date(last).toISOString()) : undefined;
  const summary: SessionSummary = {
    id: json.id,
    harness: HARNESS,
    locator: file,
    messageCount: count,
    ...(title !== undefined ? { title } : {}),
    ...(lastActivity !== undefined ? { lastActivity } : {}),
  };
  return { sessions: [summary] };
}

async function findThread(root: string, id: string): Promise<string | undefined> {
  const files = await threadFiles(root);
  const named = files.find((f) => path.basename(f, '.json') === id);
  if (named !== undefined) return named;
  for (const f of files) {
    try {
      const json: unknown = JSON.parse(await readFile(f, 'utf8'));
      if (isJsonObject(json) && json.id === id) return f;
    } catch {
      // not a thread; discovery reports it
    }
  }
  return undefined;
}

export function ampStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): Store {
  const root = ampThreadsDir(env);
  return {
    async discover(options?: DiscoverOptions): Promise<DiscoverResult> {
      const { sessions, warnings } = await summarizeSessionFiles(
        await threadFiles(root),
        (file) => file,
        summarize,
        options,
        () => openSessionFileCache(env, HARNESS, [root], cacheOptions),
      );
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      const file = await findThread(root, id);
      return file === undefined ? [] : [file];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const file = await findThread(root, id);
      if (file === undefined)
        throw new Error(`amp: no thread ${id} under ${root}; run \`txcript list\` to see the ids`);
      const [{ ampCodec }, { ampText }] = await Promise.all([import('./codec.ts'), import('./records.ts')]);
      const parsed = ampText.parse(await readFile(file, 'utf8'), file);
      const warnings: Warning[] = [...parsed.warnings];
      const transcript = ampCodec.toCommon(parsed.records, {
        sessionId: id,
        source: file,
        onWarning: (w) => warnings.push(w),
      });
      return { transcript, source: file, warnings };
    },
  };
}

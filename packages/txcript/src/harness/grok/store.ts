/**
 * Grok CLI sessions on disk: `<sessions>/<workspace>/<session uuid>/`, a
 * folder per session holding `chat_history.jsonl`, `updates.jsonl` and
 * `summary.json` (and sidecars this store leaves alone). The sessions
 * folder is `$GROK_HOME/sessions`, else `~/.grok/sessions`; the workspace
 * folder is the working folder percent-encoded byte by byte, RFC 3986
 * unreserved characters kept. A folder with neither log is not a session.
 */
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { entryPath, readDirSafe } from '../../fs/dir.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { parseObjectLine, topLevelString } from '../jsonl-scan.ts';
import { forEachLatin1Line, isWholeRecord, utf8Line } from '../line-skim.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
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
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';

const HARNESS = 'grok';
export const CHAT_HISTORY = 'chat_history.jsonl';
export const UPDATES = 'updates.jsonl';
export const SUMMARY = 'summary.json';

/** The files of a session folder that hold its text (Harness `textFiles`): its three logs, those there. */
export async function grokTextFiles(folder: string): Promise<string[]> {
  const files = [CHAT_HISTORY, UPDATES, SUMMARY].map((name) => path.join(folder, name));
  const there = await Promise.all(
    files.map((f) =>
      stat(f).then(
        (st) => st.isFile(),
        () => false,
      ),
    ),
  );
  return files.filter((_, i) => there[i]);
}

export function grokSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(envValue(env, 'GROK_HOME') ?? path.join(homeDir(env), '.grok'), 'sessions');
}

/** The workspace folder name of a working folder: every byte but A-Z a-z 0-9 - . _ ~ as %XX. */
export function grokWorkspaceFolder(cwd: string): string {
  let out = '';
  for (const byte of Buffer.from(cwd, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

async function sessionFolders(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const workspace of await readDirSafe(root)) {
    if (!workspace.isDirectory()) continue;
    const dir = entryPath(root, workspace.name);
    for (const s of await readDirSafe(dir)) if (s.isDirectory()) out.push(entryPath(dir, s.name));
  }
  return out;
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** A session folder's summary: from `summary.json` when it is whole, the model log counted. */
async function summarize(folder: string): Promise<FileScan | string> {
  const chatFile = path.join(folder, CHAT_HISTORY);
  const updatesText = await readIfThere(path.join(folder, UPDATES));
  let count = 0;
  let prompt: string | undefined;
  let hasChat = true;
  try {
    forEachLatin1Line(chatFile, (line) => {
      const type = topLevelString(line, 'type');
      if (type === 'assistant' || type === 'tool_result' || type === 'reasoning') {
        if (isWholeRecord(line)) count++;
      } else if (type === 'user' && !line.includes('<user_info>')) {
        if (isWholeRecord(line)) count++;
        if (prompt === undefined) {
          const content = parseObjectLine(utf8Line(line))?.content;
          const text = Array.isArray(content)
            ? content.find((p) => typeof p === 'object' && p !== null && 'text' in p)
            : content;
          const raw =
            typeof text === 'string'
              ? text
              : typeof text === 'object' && text !== null && 'text' in text && typeof text.text === 'string'
                ? text.text
                : undefined;
          prompt = raw?.replace(/^\s*<user_query>\s*/, '').replace(/\s*<\/user_query>\s*$/, '');
        }
      }
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    hasChat = false;
  }
  if (!hasChat && updatesText === undefined)
    return `no ${CHAT_HISTORY} or ${UPDATES}; not a Grok session folder, not listed`;
  const summaryText = await readIfThere(path.join(folder, SUMMARY));
  let summary: Record<string, unknown> = {};
  if (summaryText !== undefined) {
    try {
      const v: unknown = JSON.parse(summaryText);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) summary = v as Record<string, unknown>;
    } catch {
      return `${SUMMARY} is not JSON; not listed. Grok rewrites it on its next run in this session, or remove it`;
    }
  }
  const info = (typeof summary.info === 'object' && summary.info !== null ? summary.info : {}) as Record<
    string,
    unknown
  >;
  const id = typeof info.id === 'string' ? info.id : path.basename(folder);
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const title =
    str(summary.generated_title) ??
    str(summary.session_summary) ??
    (prompt !== undefined ? titleFromText(prompt) : undefined);
  const lastActivity =
    normalizeTimestamp(str(summary.updated_at)) ?? normalizeTimestamp(str(summary.created_at));
  const s: SessionSummary = {
    id,
    harness: HARNESS,
    locator: folder,
    messageCount: count,
    ...(title !== undefined ? { title } : {}),
    ...(lastActivity !== undefined ? { lastActivity } : {}),
  };
  return { sessions: [s] };
}

async function findFolder(root: string, id: string): Promise<string | undefined> {
  return (await sessionFolders(root)).find((f) => path.basename(f) === id);
}

export function grokStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  const root = grokSessionsDir(env);
  return {
    async discover(options?: DiscoverOptions): Promise<DiscoverResult> {
      const { sessions, warnings } = await summarizeSessionFiles(
        await sessionFolders(root),
        // The model log is what changes as a session goes on: the cache keys on it.
        (folder) => path.join(folder, CHAT_HISTORY),
        summarize,
        options,
        () => openSessionFileCache(env, HARNESS, [root], cacheOptions),
      );
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      const folder = await findFolder(root, id);
      return folder === undefined ? [] : [folder];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const folder = await findFolder(root, id);
      if (folder === undefined)
        throw new Error(`grok: no session ${id} under ${root}; run \`txcript list\` to see the ids`);
      const [{ grokCodec }, records] = await Promise.all([import('./codec.ts'), import('./records.ts')]);
      const warnings: Warning[] = [];
      const file = (name: string): string => path.join(folder, name);
      const chatText = await readIfThere(file(CHAT_HISTORY));
      const updatesText = await readIfThere(file(UPDATES));
      const summaryText = await readIfThere(file(SUMMARY));
      const chat =
        chatText !== undefined
          ? records.parseChatHistory(chatText, file(CHAT_HISTORY))
          : { lines: [], warnings: [] };
      const updates =
        updatesText !== undefined
          ? records.parseUpdates(updatesText, file(UPDATES))
          : { lines: [], warnings: [] };
      const summary =
        summaryText !== undefined ? records.parseSummary(summaryText, file(SUMMARY)) : undefined;
      warnings.push(...chat.warnings, ...updates.warnings, ...(summary?.warnings ?? []));
      const transcript = grokCodec.toCommon(
        {
          chat: chat.lines,
          updates: updates.lines,
          ...(summary !== undefined ? { summary: summary.doc } : {}),
        },
        { sessionId: id, source: folder, onWarning: (w) => warnings.push(w) },
      );
      return { transcript, source: folder, warnings };
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      const existing = await findFolder(root, id);
      if (existing !== undefined) throw new FileExistsError(existing);
      const folder = path.join(root, grokWorkspaceFolder(transcript.meta.cwd ?? ''), id);
      const [{ grokCodec }, { renderJsonl }, { renderJsonDocument }] = await Promise.all([
        import('./codec.ts'),
        import('../jsonl.ts'),
        import('../json-document.ts'),
      ]);
      const session = grokCodec.fromCommon({ ...transcript, meta: { ...transcript.meta, id } });
      await mkdir(path.dirname(folder), { recursive: true, mode: 0o700 });
      // The session folder is made here, or the save stops: two saves never share one.
      await mkdir(folder, { mode: 0o700 });
      try {
        await createFileAtomic(path.join(folder, CHAT_HISTORY), renderJsonl(session.chat));
        await createFileAtomic(path.join(folder, UPDATES), renderJsonl(session.updates));
        // The summary last: a folder without one is still read (from its logs) if the save stops midway.
        if (session.summary !== undefined)
          await createFileAtomic(path.join(folder, SUMMARY), renderJsonDocument(session.summary));
      } catch (e) {
        await rm(folder, { recursive: true, force: true });
        throw e;
      }
      return { id, locator: folder };
    },
  };
}

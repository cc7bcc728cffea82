/**
 * pi sessions on disk: `<sessions>/--<cwd>--/<start>_<uuid>.jsonl`, one file
 * per session, appended to as it goes. The sessions folder is
 * `$PI_CODING_AGENT_SESSION_DIR`, else `$PI_CODING_AGENT_DIR/sessions`, else
 * `~/.pi/agent/sessions` (a leading `~` in either variable is the home
 * folder, as pi reads them). Campfire embeds pi under its own brand, so the
 * same store serves it with `.campfire` and `CAMPFIRE_` (pi's branding
 * indirection names both from the app).
 */
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { entryPath, readDirSafe } from '../../fs/dir.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { parseObjectLine, topLevelString } from '../jsonl-scan.ts';
import { renderJsonlPieces } from '../jsonl.ts';
import { forEachLatin1Line, isWholeRecord, ownString, utf8Line } from '../line-skim.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
import {
  loadSessionFile,
  openSessionFileCache,
  summarizeSessionFiles,
  type FileScan,
  type SessionFileCacheOptions,
} from '../session-files.ts';
import { isJsonObject } from '../../model/json.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
} from '../types.ts';

/** A harness that keeps pi's session files: its id, its config folder and its variables' prefix. */
export interface PiBrand {
  harness: string;
  /** `.pi`, `.campfire`. */
  configDir: string;
  /** `PI`, `CAMPFIRE`: the variables are `<PREFIX>_CODING_AGENT_DIR` and `<PREFIX>_CODING_AGENT_SESSION_DIR`. */
  envPrefix: string;
}

export const PI_BRAND: PiBrand = { harness: 'pi', configDir: '.pi', envPrefix: 'PI' };

/** The codec modules, loaded when a session is read or written: a listing needs neither. */
async function codecModules() {
  const [codec, records] = await Promise.all([import('./codec.ts'), import('./records.ts')]);
  return { piCodec: codec.piCodec, piLines: codec.piLines, piText: records.piText };
}

function expandHome(value: string, env: NodeJS.ProcessEnv): string {
  if (value === '~') return homeDir(env);
  if (value.startsWith('~/')) return path.join(homeDir(env), value.slice(2));
  return value;
}

/** The sessions folder of a pi-branded harness under `env`. */
export function piSessionsDir(brand: PiBrand, env: NodeJS.ProcessEnv = process.env): string {
  const sessions = envValue(env, `${brand.envPrefix}_CODING_AGENT_SESSION_DIR`);
  if (sessions !== undefined) return expandHome(sessions, env);
  const agent = envValue(env, `${brand.envPrefix}_CODING_AGENT_DIR`);
  return path.join(
    agent !== undefined ? expandHome(agent, env) : path.join(homeDir(env), brand.configDir, 'agent'),
    'sessions',
  );
}

/** The folder pi files a working folder's sessions under: `/home/a/b` is `--home-a-b--`. */
export function piProjectFolder(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}

/** `2026-01-02T03-04-05-000Z_<id>.jsonl` for a session start and id. */
export function piFileName(timestamp: string, id: string): string {
  return `${new Date(timestamp).toISOString().replace(/[:.]/g, '-')}_${id}.jsonl`;
}

async function sessionFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readDirSafe(root)) {
    const p = entryPath(root, entry.name);
    // Dirent types do not follow links, so a linked folder cannot loop the walk.
    if (entry.isDirectory()) {
      for (const inner of await readDirSafe(p))
        if (inner.isFile() && inner.name.endsWith('.jsonl')) files.push(entryPath(p, inner.name));
    } else if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(p);
  }
  return files;
}

/** The id a file's name files it under (`<start>_<id>.jsonl`), if it has one. */
function idFromName(file: string): string | undefined {
  const base = path.basename(file, '.jsonl');
  const at = base.lastIndexOf('_');
  return at === -1 ? undefined : base.slice(at + 1);
}

/**
 * One file's summary without reading its conversation: the header, the
 * title (the last `session_info` name, else the first user text), the
 * number of message entries and the last entry's time.
 */
function summarize(file: string, harness: string): FileScan | string {
  let header: Record<string, unknown> | undefined;
  let first = true;
  let notPi = false;
  let name: string | undefined;
  let firstUser: string | undefined;
  let count = 0;
  let last: string | undefined;
  forEachLatin1Line(file, (line) => {
    if (line.trim() === '') return;
    const type = topLevelString(line, 'type');
    if (first) {
      first = false;
      const json = type === 'session' ? parseObjectLine(utf8Line(line)) : undefined;
      if (json === undefined || typeof json.id !== 'string') {
        notPi = true;
        return false;
      }
      header = json;
      return;
    }
    if (type === undefined) return;
    last = line;
    if (type === 'session_info') {
      const v = parseObjectLine(utf8Line(line))?.name;
      if (typeof v === 'string' && v.trim() !== '') name = v.trim();
    } else if (type === 'message' || type === 'custom_message') {
      if (isWholeRecord(line)) count++;
      if (firstUser === undefined && type === 'message' && /"role"\s*:\s*"user"/.test(line)) {
        const message = parseObjectLine(utf8Line(line))?.message;
        const content = isJsonObject(message) ? message.content : undefined;
        if (typeof content === 'string') firstUser = content;
        else if (Array.isArray(content)) {
          const text = content.find(
            (p) => isJsonObject(p) && p.type === 'text' && typeof p.text === 'string',
          );
          if (isJsonObject(text)) firstUser = text.text as string;
        }
      }
    }
  });
  if (notPi || header === undefined)
    return `the first line is not a pi session header ({"type":"session","id":…}); not listed. Move the file out of the sessions folder if it is not a ${harness} session`;
  const lastTs = last !== undefined ? topLevelString(last, 'timestamp') : undefined;
  const lastActivity =
    normalizeTimestamp(lastTs !== undefined ? ownString(lastTs) : undefined) ??
    normalizeTimestamp(typeof header.timestamp === 'string' ? header.timestamp : undefined);
  const title = name ?? (firstUser !== undefined ? titleFromText(firstUser) : undefined);
  const summary: SessionSummary = {
    id: header.id as string,
    harness,
    locator: file,
    messageCount: count,
    ...(title !== undefined ? { title } : {}),
    ...(lastActivity !== undefined ? { lastActivity } : {}),
  };
  return { sessions: [summary] };
}

/** The file of session `id`: by its name, else by the id in its header. */
async function findSession(root: string, id: string): Promise<string | undefined> {
  const files = await sessionFiles(root);
  const named = files.find((f) => idFromName(f) === id);
  if (named !== undefined) return named;
  for (const f of files) {
    let headerId: string | undefined;
    try {
      forEachLatin1Line(f, (line) => {
        if (line.trim() === '') return;
        const json = parseObjectLine(utf8Line(line));
        headerId = json?.type === 'session' && typeof json.id === 'string' ? json.id : undefined;
        return false;
      });
    } catch {
      continue;
    }
    if (headerId === id) return f;
  }
  return undefined;
}

export function piFamilyStore(
  brand: PiBrand,
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  const root = piSessionsDir(brand, env);
  return {
    async discover(options?: DiscoverOptions): Promise<DiscoverResult> {
      const { sessions, warnings } = await summarizeSessionFiles(
        await sessionFiles(root),
        (file) => file,
        (file) => Promise.resolve(summarize(file, brand.harness)),
        options,
        () => openSessionFileCache(env, brand.harness, [root], cacheOptions),
      );
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[] | undefined> {
      assertSafeSessionId(id, brand.harness);
      const file = await findSession(root, id);
      return file === undefined ? [] : [file];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, brand.harness);
      const file = await findSession(root, id);
      if (file === undefined)
        throw new Error(
          `${brand.harness}: no session ${id} under ${root}; run \`txcript list\` to see the ids`,
        );
      const { piCodec, piText } = await codecModules();
      return loadSessionFile(file, id, { text: piText, codec: piCodec });
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, brand.harness);
      const existing = await findSession(root, id);
      if (existing !== undefined) throw new FileExistsError(existing);
      if (Number.isNaN(Date.parse(transcript.meta.timestamp)))
        throw new Error(
          `${brand.harness}: meta.timestamp ${JSON.stringify(transcript.meta.timestamp)} is not a date; session files are named by their start`,
        );
      const target = path.join(
        root,
        piProjectFolder(transcript.meta.cwd ?? ''),
        piFileName(transcript.meta.timestamp, id),
      );
      const { piLines } = await codecModules();
      await createFileAtomic(
        target,
        renderJsonlPieces(piLines({ ...transcript, meta: { ...transcript.meta, id } })),
      );
      return { id, locator: target };
    },
  };
}

/** The pi store (`pi`). */
export function piStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  return piFamilyStore(PI_BRAND, env, cacheOptions);
}

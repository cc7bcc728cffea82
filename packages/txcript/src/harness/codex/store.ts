/**
 * Codex rollouts on disk: `<sessions>/YYYY/MM/DD/rollout-<YYYY-MM-DDThh-mm-ss>-<uuid>.jsonl`.
 * The sessions folder is `$TXCRIPT_CODEX_ROOT`, else `$CODEX_HOME/sessions`,
 * else `~/.codex/sessions`; rollouts archived by Codex sit flat in the
 * sibling `archived_sessions` folder and are listed and loaded too.
 */
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { isJsonObject } from '../../model/json.ts';
import { parseObjectLine, topLevelString } from '../jsonl-scan.ts';
import { forEachLatin1Line, isWholeRecord, ownString, utf8Line } from '../line-skim.ts';
import { loadSessionFile, openSessionFileCache, summarizeSessionFiles } from '../session-files.ts';
import { renderJsonlPieces } from '../jsonl.ts';
import type { FileScan, SessionFileCacheOptions } from '../session-files.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { readDirSafe } from '../../fs/dir.ts';
import { envValue, homeDir } from '../env.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
} from '../types.ts';

const HARNESS = 'codex';

/** The codec modules (and zod), loaded when a rollout is read or written: a listing needs neither. */
async function codecModules() {
  const [codec, records] = await Promise.all([import('./codec.ts'), import('./records.ts')]);
  return {
    codexCodec: codec.codexCodec,
    codexLines: codec.codexLines,
    readCodexCommon: codec.readCodexCommon,
    codexText: records.codexText,
  };
}

export interface CodexRoots {
  sessions: string;
  /** Codex's archive folder, when the sessions folder is Codex's own. */
  archived?: string;
}

export function codexRoots(env: NodeJS.ProcessEnv = process.env): CodexRoots {
  const explicit = envValue(env, 'TXCRIPT_CODEX_ROOT');
  if (explicit !== undefined) return { sessions: explicit };
  const home = envValue(env, 'CODEX_HOME') ?? path.join(homeDir(env), '.codex');
  return { sessions: path.join(home, 'sessions'), archived: path.join(home, 'archived_sessions') };
}

/** `rollout-2026-08-10T13-02-51-<uuid>.jsonl` for a session start (UTC) and id. */
export function rolloutFileName(timestamp: string, id: string): string {
  const stamp = new Date(timestamp).toISOString().slice(0, 19).replace(/:/g, '-');
  return `rollout-${stamp}-${id}.jsonl`;
}

const ROLLOUT_RE = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

async function collectRollouts(dir: string, out: string[], depth = 0): Promise<void> {
  for (const entry of await readDirSafe(dir)) {
    const p = path.join(dir, entry.name);
    // Dirent types do not follow symlinks, so a linked folder cannot loop the walk.
    if (entry.isDirectory() && depth < 4) await collectRollouts(p, out, depth + 1);
    else if (entry.isFile() && entry.name.startsWith('rollout-') && entry.name.endsWith('.jsonl'))
      out.push(p);
  }
}

async function allRollouts(roots: CodexRoots): Promise<string[]> {
  const files: string[] = [];
  await collectRollouts(roots.sessions, files);
  if (roots.archived !== undefined) await collectRollouts(roots.archived, files);
  return files;
}

/** The display-log events an event-only rollout is read from (codec.ts). */
const DISPLAY_MESSAGES = new Set(['user_message', 'agent_message', 'agent_reasoning']);

const CONVERSATION_ITEMS = new Set([
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
]);

function payloadType(line: string): string | undefined {
  const at = line.indexOf('"payload":');
  if (at === -1) return undefined;
  return /^\s*\{\s*"type"\s*:\s*"([A-Za-z_]+)"/.exec(line.slice(at + 10, at + 80))?.[1];
}

/**
 * One rollout's summary without parsing the conversation: the first
 * `session_meta` line is parsed for the id; other lines are classified by
 * their `type` and payload `type` prefix; only user `event_msg`s are parsed,
 * until one gives the title. The count is of protocol items (messages,
 * reasoning, calls and outputs), Codex's own scaffolding messages included.
 */
function summarize(file: string): FileScan | string {
  const seen: { id?: string; title?: string; last?: string } = {};
  let count = 0;
  /** Display-log messages, the conversation of a rollout that has no protocol items. */
  let events = 0;
  forEachLatin1Line(file, (line) => {
    const type = topLevelString(line, 'type');
    if (type === undefined) return;
    seen.last = line;
    if (type === 'session_meta' && seen.id === undefined) {
      const payload = parseObjectLine(utf8Line(line))?.payload;
      if (isJsonObject(payload) && typeof payload.id === 'string') seen.id = payload.id;
    } else if (type === 'response_item') {
      const item = payloadType(line);
      if (
        item === 'message' ? /"role"\s*:\s*"(user|assistant)"/.test(line) : CONVERSATION_ITEMS.has(item ?? '')
      )
        if (isWholeRecord(line)) count++;
    } else if (type === 'event_msg') {
      const event = payloadType(line);
      if (event !== undefined && DISPLAY_MESSAGES.has(event)) events++;
      if (seen.title !== undefined || event !== 'user_message') return;
      const payload = parseObjectLine(utf8Line(line))?.payload as { message?: unknown } | undefined;
      if (typeof payload?.message === 'string' && !payload.message.trimStart().startsWith('<'))
        seen.title = titleFromText(payload.message);
    }
  });
  const { id, title, last } = seen;
  if (id === undefined) return 'no session_meta line with an id; not a Codex session, not listed';
  const lastTs = last !== undefined ? topLevelString(last, 'timestamp') : undefined;
  const lastActivity = lastTs !== undefined ? normalizeTimestamp(ownString(lastTs)) : undefined;
  const summary: SessionSummary = {
    id,
    harness: HARNESS,
    locator: file,
    messageCount: count > 0 ? count : events,
    ...(title !== undefined ? { title } : {}),
    ...(lastActivity !== undefined ? { lastActivity } : {}),
  };
  return { sessions: [summary] };
}

async function findRollout(roots: CodexRoots, id: string): Promise<string | undefined> {
  const files = await allRollouts(roots);
  return files.find((f) => ROLLOUT_RE.exec(path.basename(f))?.[1]?.toLowerCase() === id.toLowerCase());
}

export function codexStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  const roots = codexRoots(env);
  return {
    async discover(options?: DiscoverOptions): Promise<DiscoverResult> {
      const dirs = [roots.sessions, ...(roots.archived !== undefined ? [roots.archived] : [])];
      const { sessions, warnings } = await summarizeSessionFiles(
        await allRollouts(roots),
        (file) => file,
        (file) => Promise.resolve(summarize(file)),
        options,
        () => openSessionFileCache(env, HARNESS, dirs, cacheOptions),
      );
      return { sessions, warnings };
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const file = await findRollout(roots, id);
      if (file === undefined) {
        throw new Error(
          `codex: no rollout for session ${id} under ${roots.sessions}${roots.archived ? ` or ${roots.archived}` : ''}; run \`txcript list\` to see the ids`,
        );
      }
      const { codexCodec, codexText, readCodexCommon } = await codecModules();
      return loadSessionFile(file, id, { text: codexText, codec: codexCodec, readCommon: readCodexCommon });
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      const existing = await findRollout(roots, id);
      if (existing !== undefined) throw new FileExistsError(existing);
      const when = new Date(transcript.meta.timestamp);
      if (Number.isNaN(when.getTime())) {
        throw new Error(
          `codex: meta.timestamp ${JSON.stringify(transcript.meta.timestamp)} is not a date; rollouts are filed by start time`,
        );
      }
      const iso = when.toISOString();
      const dir = path.join(roots.sessions, iso.slice(0, 4), iso.slice(5, 7), iso.slice(8, 10));
      const target = path.join(dir, rolloutFileName(iso, id));
      const { codexLines } = await codecModules();
      await createFileAtomic(target, renderJsonlPieces(codexLines(transcript)));
      return { id, locator: target };
    },
  };
}

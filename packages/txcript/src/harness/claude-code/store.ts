/**
 * Claude Code sessions on disk: `<root>/<project-dir>/<session-uuid>.jsonl`,
 * root `$TXCRIPT_CLAUDE_CODE_ROOT`, else `$CLAUDE_CONFIG_DIR/projects`,
 * else `~/.claude/projects`. Subagent transcripts under
 * `<project-dir>/<session>/subagents/*.jsonl` are listed with their parent.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { readDirSafe } from '../../fs/dir.ts';
import { isJsonObject } from '../../model/json.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { parseObjectLine, textLines, topLevelString } from '../jsonl-scan.ts';
import { loadSessionFile, openSessionFileCache, summarizeSessionFiles } from '../session-files.ts';
import type { SessionFileCacheOptions } from '../session-files.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
import { claudeCodeCodec } from './codec.ts';
import { claudeCodeText } from './records.ts';

const HARNESS = 'claude_code';

/** The projects root for an env (see the module comment for the order). */
export function claudeProjectsRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = envValue(env, 'TXCRIPT_CLAUDE_CODE_ROOT');
  if (explicit !== undefined) return explicit;
  const config = envValue(env, 'CLAUDE_CONFIG_DIR');
  return path.join(config ?? path.join(homeDir(env), '.claude'), 'projects');
}

/**
 * Claude Code's project folder name for a cwd: every character that is not
 * an ASCII letter or digit becomes `-` (`/home/a/my.app` -> `-home-a-my-app`).
 */
export function claudeProjectDirName(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, '-');
}

interface SessionFile {
  file: string;
  id: string;
  parentId?: string;
}

async function listSessionFiles(root: string): Promise<SessionFile[]> {
  const out: SessionFile[] = [];
  for (const project of await readDirSafe(root)) {
    if (!project.isDirectory()) continue;
    const dir = path.join(root, project.name);
    for (const entry of await readDirSafe(dir)) {
      if (entry.isFile() && entry.name.endsWith('.jsonl')) {
        out.push({ file: path.join(dir, entry.name), id: entry.name.slice(0, -'.jsonl'.length) });
      } else if (entry.isDirectory()) {
        // <session>/subagents/*.jsonl: a subagent's own transcript.
        const sub = path.join(dir, entry.name, 'subagents');
        for (const agent of await readDirSafe(sub)) {
          if (agent.isFile() && agent.name.endsWith('.jsonl')) {
            out.push({
              file: path.join(sub, agent.name),
              id: agent.name.slice(0, -'.jsonl'.length),
              parentId: entry.name,
            });
          }
        }
      }
    }
  }
  return out;
}

/**
 * Summary of one file without parsing the conversation: record types come
 * from a scanner that stops at the top-level `type`; only title-bearing
 * lines (summaries, custom titles, the first user prompt) and the last
 * timestamped line are parsed.
 */
async function summarize(sf: SessionFile): Promise<SessionSummary> {
  const text = await fs.readFile(sf.file, 'utf8');
  let count = 0;
  let summary: string | undefined;
  let custom: string | undefined;
  let firstUser: string | undefined;
  let sidechainParent: string | undefined;
  let lastLine: string | undefined;
  for (const line of textLines(text)) {
    const type = topLevelString(line, 'type');
    if (type === undefined) continue;
    if (type === 'user' || type === 'assistant') {
      count++;
      lastLine = line;
      if (type === 'user' && firstUser === undefined) {
        const parsed = parseObjectLine(line);
        const content =
          isJsonObject(parsed) && isJsonObject(parsed.message) ? parsed.message.content : undefined;
        if (typeof content === 'string' && parsed?.isMeta !== true && !content.trimStart().startsWith('<'))
          firstUser = content;
        if (isJsonObject(parsed) && parsed.isSidechain === true && typeof parsed.sessionId === 'string') {
          sidechainParent = parsed.sessionId;
        }
      }
    } else if (type === 'summary' && summary === undefined) {
      const parsed = parseObjectLine(line);
      if (isJsonObject(parsed) && typeof parsed.summary === 'string') summary = parsed.summary;
    } else if (type === 'custom-title') {
      const parsed = parseObjectLine(line);
      if (isJsonObject(parsed) && typeof parsed.customTitle === 'string') custom = parsed.customTitle;
    }
  }
  const title = custom ?? summary ?? (firstUser !== undefined ? titleFromText(firstUser) : undefined);
  const lastTs =
    lastLine !== undefined ? normalizeTimestamp(topLevelString(lastLine, 'timestamp')) : undefined;
  const parentId =
    sf.parentId ?? (sidechainParent !== undefined && sidechainParent !== sf.id ? sidechainParent : undefined);
  return {
    id: sf.id,
    harness: HARNESS,
    locator: sf.file,
    messageCount: count,
    ...(title !== undefined ? { title } : {}),
    ...(lastTs !== undefined ? { lastActivity: lastTs } : {}),
    ...(parentId !== undefined ? { parentId } : {}),
  };
}

async function findSessionFile(root: string, id: string): Promise<{ file?: string; warnings: Warning[] }> {
  const hits: { file: string; mtime: number }[] = [];
  for (const project of await readDirSafe(root)) {
    if (!project.isDirectory()) continue;
    const file = path.join(root, project.name, `${id}.jsonl`);
    try {
      const st = await fs.stat(file);
      if (st.isFile()) hits.push({ file, mtime: st.mtimeMs });
    } catch {
      // not in this project
    }
  }
  hits.sort((a, b) => b.mtime - a.mtime);
  const warnings: Warning[] =
    hits.length > 1
      ? [
          {
            source: root,
            message: `session ${id} exists in ${hits.length} project folders; using the newest, ${hits[0]!.file}`,
          },
        ]
      : [];
  return { ...(hits[0] !== undefined ? { file: hits[0].file } : {}), warnings };
}

export function claudeCodeStore(
  env: NodeJS.ProcessEnv = process.env,
  cacheOptions: SessionFileCacheOptions = {},
): SavingStore {
  const root = claudeProjectsRoot(env);
  return {
    async discover(options?: DiscoverOptions): Promise<DiscoverResult> {
      const files = await listSessionFiles(root);
      return summarizeSessionFiles(
        files,
        (sf) => sf.file,
        summarize,
        options,
        () => openSessionFileCache(env, HARNESS, [root], cacheOptions),
      );
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const { file, warnings } = await findSessionFile(root, id);
      if (file === undefined) {
        throw new Error(
          `claude_code: no session ${id} under ${root} (looked for <project>/${id}.jsonl); run \`txcript list\` to see the ids`,
        );
      }
      return loadSessionFile(file, id, { text: claudeCodeText, codec: claudeCodeCodec }, warnings);
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const cwd = transcript.meta.cwd;
      if (cwd === undefined || cwd === '') {
        throw new Error(
          'claude_code: the transcript has no cwd, and Claude Code files a session under its working folder; set meta.cwd before saving',
        );
      }
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      const existing = await findSessionFile(root, id);
      if (existing.file !== undefined) throw new FileExistsError(existing.file);
      const target = path.join(root, claudeProjectDirName(cwd), `${id}.jsonl`);
      const text = claudeCodeText.render(claudeCodeCodec.fromCommon(transcript));
      await createFileAtomic(target, text);
      return { id, locator: target };
    },
  };
}

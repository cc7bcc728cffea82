/**
 * Claude Code sessions on disk: `<root>/<project-dir>/<session-uuid>.jsonl`,
 * root `$TXCRIPT_CLAUDE_CODE_ROOT`, else `$CLAUDE_CONFIG_DIR/projects`,
 * else `~/.claude/projects`. Subagent transcripts under
 * `<project-dir>/<session>/subagents/*.jsonl` are listed with their parent.
 */
import { closeSync, openSync, promises as fs, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  StreamedLoad,
  Warning,
} from '../types.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { entryPath, readDirSafe } from '../../fs/dir.ts';
import { isJsonObject } from '../../model/json.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { parseObjectLine, topLevelLiteral, topLevelString } from '../jsonl-scan.ts';
import { forEachLatin1Line, isWholeRecord, ownString, utf8Line } from '../line-skim.ts';

const maybeOwn = (s: string | undefined): string | undefined => (s === undefined ? undefined : ownString(s));
import {
  loadSessionFile,
  openSessionFileCache,
  streamSessionFile,
  summarizeSessionFiles,
} from '../session-files.ts';
import type { FileScan, ScannedFiles, SessionFileCacheOptions } from '../session-files.ts';
import {
  firstText,
  groupSidechains,
  parseSidechainSessionId,
  sidechainSessionId,
  taskCalls,
  type LineFacts,
  type TaskCall,
} from './sidechains.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';

const HARNESS = 'claude_code';

/** The codec modules (and zod), loaded when a session is read or written: a listing needs neither. */
async function codecModules() {
  const [codec, records] = await Promise.all([import('./codec.ts'), import('./records.ts')]);
  return {
    claudeCodeCodec: codec.claudeCodeCodec,
    sidechainToCommon: codec.sidechainToCommon,
    readClaudeCommon: codec.readClaudeCommon,
    streamClaudeCommon: codec.streamClaudeCommon,
    claudeCodeText: records.claudeCodeText,
  };
}

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
        out.push({ file: entryPath(dir, entry.name), id: entry.name.slice(0, -'.jsonl'.length) });
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

/** A summary-only file's summaries, which may title the session whose lines their leafUuid names. */
type LeafSummaries = [leafUuid: string, summary: string][];

/** Task/Agent calls in a main assistant line, parsed only when the line names such a tool. */
function skimCalls(line: string): TaskCall[] {
  if (!line.includes('"name":"Task"') && !line.includes('"name":"Agent"')) return [];
  const parsed = parseObjectLine(utf8Line(line));
  return isJsonObject(parsed) && isJsonObject(parsed.message) ? taskCalls(parsed.message.content) : [];
}

/** The first prompt of a user line, when it is a real one (not meta, not harness markup). */
function skimPrompt(line: string): string | undefined {
  const parsed = parseObjectLine(utf8Line(line));
  if (!isJsonObject(parsed) || parsed.isMeta === true) return undefined;
  const text = firstText(parsed.message);
  return text === undefined || text.trimStart().startsWith('<') ? undefined : text;
}

/** A skimmed conversation line: its facts are scanned out of the text only when grouping asks. */
class SkimmedLine implements LineFacts {
  uuid?: string;
  parentUuid?: string;
  constructor(
    readonly line: string,
    readonly type: string,
    readonly entry: boolean,
    readonly sidechain: boolean,
  ) {}
  calls(): TaskCall[] {
    return this.type === 'assistant' ? skimCalls(this.line) : [];
  }
  prompt(): string | undefined {
    return this.type === 'user' ? skimPrompt(this.line) : undefined;
  }
  /** Scanned only for the last line of a session. */
  timestamp(): string | undefined {
    return this.entry ? topLevelString(this.line, 'timestamp') : undefined;
  }
}

/** `isSidechain: true` at the top level; the plain search finds the key (written early) before any nested one. */
function isSidechainLine(line: string): boolean {
  const at = line.indexOf('"isSidechain":');
  if (at === -1 || !line.startsWith('true', at + 14)) return false;
  return topLevelLiteral(line, 'isSidechain') === 'true';
}

/** `isWholeRecord` lines of a type the conversation has (a local command's `system` line included: codec.ts). */
function isEntryLine(line: string, type: string): boolean {
  // A line cut short by a crash is no message to the codec either (line-skim.ts isWholeRecord).
  return (
    (type === 'user' ||
      type === 'assistant' ||
      (type === 'system' && line.includes('"subtype":"local_command"'))) &&
    isWholeRecord(line)
  );
}

/** Files up to this size keep their conversation lines while they are scanned (see `scanFile`). */
const KEEP_LINES_UP_TO = 8 * 2 ** 20;
const SIDECHAIN_MARK = Buffer.from('"isSidechain":true');

/** Whether the file's bytes hold `"isSidechain":true` anywhere: every sidechain line does (isSidechainLine). */
function mentionsSidechain(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    const keep = SIDECHAIN_MARK.length - 1;
    let filled = 0;
    for (;;) {
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) return false;
      const end = filled + n;
      if (buf.subarray(0, end).includes(SIDECHAIN_MARK)) return true;
      // The mark may straddle two reads: the tail of this one starts the next.
      buf.copy(buf, 0, end - keep, end);
      filled = keep;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The conversation of a file with no sidechain line, summed up as its lines go
 * by and none of them kept: its message count, first prompt and last line
 * (for its time). A summary's leaf is looked for in a second read, only when
 * a summary can give the title.
 */
class PlainMain {
  count = 0;
  prompt: string | undefined;
  #last: string | undefined;

  add(line: string, type: string): void {
    this.count += 1;
    if (this.prompt === undefined && type === 'user') this.prompt = skimPrompt(line);
    this.#last = line;
  }

  get lastTimestamp(): string | undefined {
    return this.#last === undefined ? undefined : topLevelString(this.#last, 'timestamp');
  }
}

/** Which of `uuids` name a conversation line of `file` (as scanFile's lines: `"uuid":"<id>"` in the line). */
function linesNamed(file: string, uuids: ReadonlySet<string>): Set<string> {
  const found = new Set<string>();
  const needles = [...uuids].map((uuid) => [uuid, `"uuid":"${uuid}"`] as const);
  forEachLatin1Line(file, (line) => {
    const type = topLevelString(line, 'type');
    if (type === undefined || !isEntryLine(line, type)) return;
    for (const [uuid, needle] of needles) if (line.includes(needle)) found.add(uuid);
    return found.size < needles.length;
  });
  return found;
}

/**
 * What one file holds, without parsing the conversation: record types come
 * from a scanner that stops at the top-level `type`; only title-bearing lines
 * (titles, summaries, the first prompt), Task calls and sidechain lines are
 * parsed or scanned further. Sidechains are grouped as `load` groups them
 * (sidechains.ts), each a child session. A file over KEEP_LINES_UP_TO with no
 * sidechain line (a cheap byte search says so first) keeps none of its lines
 * (PlainMain), so a listing's memory does not grow with a long session.
 */
function scanFile(sf: SessionFile): FileScan {
  const plain =
    statSync(sf.file).size > KEEP_LINES_UP_TO && !mentionsSidechain(sf.file) ? new PlainMain() : null;
  const entries: SkimmedLine[] = [];
  const summaries: { leaf?: string; text: string }[] = [];
  const titles: Record<'custom' | 'agent' | 'ai', string | undefined> = {
    custom: undefined,
    agent: undefined,
    ai: undefined,
  };
  let sidechainParent: string | undefined;
  forEachLatin1Line(sf.file, (line) => {
    const type = topLevelString(line, 'type');
    if (type === undefined) return;
    if (type === 'summary' || type === 'custom-title' || type === 'agent-name' || type === 'ai-title') {
      const parsed = parseObjectLine(utf8Line(line));
      if (!isJsonObject(parsed)) return;
      if (type === 'summary' && typeof parsed.summary === 'string')
        summaries.push({
          ...(typeof parsed.leafUuid === 'string' ? { leaf: parsed.leafUuid } : {}),
          text: parsed.summary,
        });
      else if (type === 'custom-title' && typeof parsed.customTitle === 'string')
        titles.custom = parsed.customTitle;
      else if (type === 'agent-name' && typeof parsed.agentName === 'string') titles.agent = parsed.agentName;
      else if (type === 'ai-title' && typeof parsed.aiTitle === 'string') titles.ai = parsed.aiTitle;
      return;
    }
    const entry = isEntryLine(line, type);
    if (plain !== null) {
      if (entry) plain.add(line, type);
      return;
    }
    if (!entry && type !== 'system') return;
    const sidechain = isSidechainLine(line);
    if (!entry && !sidechain) return;
    const facts = new SkimmedLine(line, type, entry, sidechain);
    if (sidechain) {
      const uuid = topLevelString(line, 'uuid');
      const parent = topLevelString(line, 'parentUuid');
      if (uuid !== undefined) facts.uuid = ownString(uuid);
      if (parent !== undefined) facts.parentUuid = parent;
      if (type === 'user' && sidechainParent === undefined)
        sidechainParent = maybeOwn(topLevelString(line, 'sessionId'));
    }
    entries.push(facts);
  });
  const titled = titles.custom ?? titles.agent ?? titles.ai;
  // A summary's leaf must be a line of this file (leaves are usually the last line: searched from the end).
  const hasLine = (uuid: string): boolean => {
    const needle = `"uuid":"${uuid}"`;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.line.includes(needle)) return true;
    return false;
  };
  const leafSummary = (): string | undefined => {
    const leaves = new Set(summaries.flatMap((s) => (s.leaf !== undefined ? [s.leaf] : [])));
    if (leaves.size === 0) return undefined;
    const named = plain !== null ? linesNamed(sf.file, leaves) : undefined;
    return summaries.findLast(
      (s) => s.leaf !== undefined && (named !== undefined ? named.has(s.leaf) : hasLine(s.leaf)),
    )?.text;
  };
  if (plain !== null ? plain.count === 0 : !entries.some((e) => e.entry)) {
    // Not a session (summary-only, or bookkeeping only): its summaries may title the sessions they point into.
    const leaves: LeafSummaries = summaries.flatMap((s) =>
      s.leaf !== undefined ? [[s.leaf, s.text] as [string, string]] : [],
    );
    return { sessions: [], ...(leaves.length > 0 ? { notes: { leafSummaries: leaves } } : {}) };
  }
  const summary = (
    id: string,
    facts: { count: number; last: string | undefined },
    title: string | undefined,
    parentId: string | undefined,
  ): SessionSummary => {
    const lastTs = facts.last !== undefined ? normalizeTimestamp(ownString(facts.last)) : undefined;
    return {
      id,
      harness: HARNESS,
      locator: sf.file,
      messageCount: facts.count,
      ...(title !== undefined && title !== '' ? { title } : {}),
      ...(lastTs !== undefined ? { lastActivity: lastTs } : {}),
      ...(parentId !== undefined ? { parentId } : {}),
    };
  };
  const own = titled ?? leafSummary();
  const promptTitle = (prompt: string | undefined): string | undefined =>
    prompt !== undefined ? titleFromText(prompt) : undefined;
  const notes = own === undefined ? { notes: { promptTitled: true } } : {};
  if (plain !== null) {
    const facts = { count: plain.count, last: plain.lastTimestamp };
    return { sessions: [summary(sf.id, facts, own ?? promptTitle(plain.prompt), sf.parentId)], ...notes };
  }
  const { main, chains } = groupSidechains(entries);
  const firstPrompt = (lines: readonly SkimmedLine[]): string | undefined => {
    for (const l of lines) {
      const prompt = l.entry ? l.prompt() : undefined;
      if (prompt !== undefined) return prompt;
    }
    return undefined;
  };
  const factsOf = (lines: readonly SkimmedLine[]) => ({
    count: lines.filter((l) => l.entry).length,
    last: lines.findLast((l) => l.entry)?.timestamp(),
  });
  const allSidechain = chains.length === 0 && entries.every((e) => !e.entry || e.sidechain);
  const parentId =
    sf.parentId ??
    (allSidechain && sidechainParent !== undefined && sidechainParent !== sf.id
      ? sidechainParent
      : undefined);
  const mainLines = main.map((i) => entries[i]!);
  const prompt = own === undefined ? firstPrompt(mainLines) : undefined;
  const sessions = [
    summary(sf.id, factsOf(mainLines), own ?? promptTitle(prompt), parentId),
    ...chains.map((c) => {
      const lines = c.lines.map((i) => entries[i]!);
      const prompt = c.description === undefined ? firstPrompt(lines) : undefined;
      return summary(
        sidechainSessionId(sf.id, c.key),
        factsOf(lines),
        c.description ?? promptTitle(prompt),
        sf.id,
      );
    }),
  ];
  return { sessions, ...notes };
}

/**
 * Titles from summary-only files: a session whose title is only its first
 * prompt takes the last such summary whose leafUuid is one of its lines.
 * Claude Code writes these files beside the sessions, so only the sessions
 * of the same project folder are looked at, and only when there are any.
 */
async function applyLeafSummaries(scans: ScannedFiles['scans']): Promise<void> {
  const byFolder = new Map<string, LeafSummaries>();
  for (const { path: file, scan } of scans) {
    const leaves = scan.notes?.leafSummaries as LeafSummaries | undefined;
    if (Array.isArray(leaves) && leaves.length > 0)
      byFolder.set(path.dirname(file), [...(byFolder.get(path.dirname(file)) ?? []), ...leaves]);
  }
  if (byFolder.size === 0) return;
  for (const entry of scans) {
    const { path: file, scan } = entry;
    const leaves = byFolder.get(path.dirname(file));
    const main = scan.sessions[0];
    if (leaves === undefined || main === undefined || scan.notes?.promptTitled !== true) continue;
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch {
      continue;
    }
    const hit = leaves.findLast(([leaf]) => text.includes(`"uuid":"${leaf}"`));
    // A cached scan is the cache's own object: the title goes on a copy.
    if (hit !== undefined)
      entry.scan = { ...scan, sessions: [{ ...main, title: hit[1] }, ...scan.sessions.slice(1)] };
  }
}

/** Whether `file` is a session file of `id` under `root` that is there (a listing's locator, checked). */
function isSessionFileOf(root: string, file: string, id: string): boolean {
  const inside = path.relative(root, file);
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return false;
  return (
    path.basename(file) === `${id}.jsonl` && statSync(file, { throwIfNoEntry: false })?.isFile() === true
  );
}

async function findSessionFile(root: string, id: string): Promise<{ file?: string; warnings: Warning[] }> {
  const hits: { file: string; mtime: number }[] = [];
  const consider = async (file: string): Promise<void> => {
    try {
      const st = await fs.stat(file);
      if (st.isFile()) hits.push({ file, mtime: st.mtimeMs });
    } catch {
      // not there
    }
  };
  for (const project of await readDirSafe(root)) {
    if (project.isDirectory()) await consider(path.join(root, project.name, `${id}.jsonl`));
  }
  // A subagent's own file: <project>/<session>/subagents/<id>.jsonl.
  if (hits.length === 0) {
    for (const sf of await listSessionFiles(root))
      if (sf.parentId !== undefined && sf.id === id) await consider(sf.file);
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
      const { warnings, scans } = await summarizeSessionFiles(
        files,
        (sf) => sf.file,
        (sf) => Promise.resolve(scanFile(sf)),
        options,
        () => openSessionFileCache(env, HARNESS, [root], cacheOptions),
      );
      await applyLeafSummaries(scans);
      return { sessions: scans.flatMap((s) => s.scan.sessions), warnings };
    },

    async locate(id: string): Promise<string[] | undefined> {
      // A subagent conversation inside a file is listed only if the file has it: the listing decides.
      if (parseSidechainSessionId(id) !== undefined) return undefined;
      return (await listSessionFiles(root)).filter((sf) => sf.id === id).map((sf) => sf.file);
    },

    async load(id: string, listedAt?: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const { claudeCodeCodec, claudeCodeText, sidechainToCommon, readClaudeCommon } = await codecModules();
      const sidechain = parseSidechainSessionId(id);
      const fileId = sidechain?.fileId ?? id;
      const { file, warnings } =
        listedAt !== undefined && isSessionFileOf(root, listedAt, fileId)
          ? { file: listedAt, warnings: [] }
          : await findSessionFile(root, fileId);
      if (file === undefined) {
        throw new Error(
          `claude_code: no session ${id} under ${root} (looked for <project>/${fileId}.jsonl and subagent files); run \`txcript list\` to see the ids`,
        );
      }
      if (sidechain === undefined)
        return loadSessionFile(
          file,
          id,
          { text: claudeCodeText, codec: claudeCodeCodec, readCommon: readClaudeCommon },
          warnings,
        );
      const loaded = await loadSessionFile(
        file,
        id,
        {
          text: claudeCodeText,
          codec: {
            ...claudeCodeCodec,
            toCommon: (records, ctx) => {
              const t = sidechainToCommon(records, sidechain.key, ctx);
              if (t === undefined)
                throw new Error(
                  `claude_code: ${file} has no subagent conversation started by ${sidechain.key}; run \`txcript list\` to see the ids`,
                );
              return t;
            },
          },
        },
        warnings,
      );
      return loaded;
    },

    async stream(id: string): Promise<StreamedLoad | undefined> {
      assertSafeSessionId(id, HARNESS);
      // An inline subagent is picked out of its file's lines: it is loaded.
      if (parseSidechainSessionId(id) !== undefined) return undefined;
      const { file, warnings } = await findSessionFile(root, id);
      if (file === undefined) return undefined; // load says why
      const { streamClaudeCommon } = await codecModules();
      return streamSessionFile(file, id, streamClaudeCommon, warnings);
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
      const { claudeCodeCodec, claudeCodeText } = await codecModules();
      const text = claudeCodeText.render(claudeCodeCodec.fromCommon(transcript));
      await createFileAtomic(target, text);
      return { id, locator: target };
    },
  };
}

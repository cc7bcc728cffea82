/**
 * Cowork sessions: `<app data>/Claude/local-agent-mode-sessions/<org
 * uuid>/<account uuid>/[agent/]local_<id>.json`, each with its storage
 * folder `local_<id>/` holding the Claude Code transcript under
 * `.claude/projects/<project>/<cliSessionId>.jsonl` and `audit.jsonl`
 * (docs/formats/cowork.md). The root is `$COWORK_SESSIONS_DIR`, else the
 * Electron app-data folder of the platform.
 *
 * A new session's storage folder is built beside its place and renamed in;
 * its record, what makes the app list it, is written last.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { JsonValue, Transcript } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { createFileAtomic, FileExistsError } from '../../fs/atomic.ts';
import { readDirSafe } from '../../fs/dir.ts';
import { claudeProjectDirName } from '../claude-code/store.ts';
import { electronAppData, envValue } from '../env.ts';
import { SKIPPED_LINE } from '../jsonl.ts';
import { loadResult } from '../load-result.ts';
import { millisTime } from '../native-values.ts';
import { assertSafeSessionId, isUuid, sessionUuid } from '../session-id.ts';
import type {
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';

const HARNESS = 'cowork';

export const COWORK_SESSIONS_ENV = 'COWORK_SESSIONS_DIR';
/** `<org uuid>/<account uuid>`: the account tree a new session goes to (`continue --out` sets it; the app's own trees are found otherwise). */
export const COWORK_ACCOUNT_ENV = 'TXCRIPT_COWORK_ACCOUNT';

export function coworkRoot(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const explicit = envValue(env, COWORK_SESSIONS_ENV);
  if (explicit !== undefined) return explicit;
  return path.join(electronAppData(env, platform), 'Claude', 'local-agent-mode-sessions');
}

/** The account trees: `<org>/<account>` folders whose names are both UUIDs (the app keeps other state beside them). */
async function accountDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const org of await readDirSafe(root)) {
    if (!org.isDirectory() || !isUuid(org.name)) continue;
    for (const account of await readDirSafe(path.join(root, org.name)))
      if (account.isDirectory() && isUuid(account.name)) out.push(path.join(root, org.name, account.name));
  }
  return out;
}

const isRecordName = (name: string): boolean => name.startsWith('local_') && name.endsWith('.json');

/** Every session record: in each account tree and its `agent/` folder. */
async function recordFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const account of await accountDirs(root))
    for (const dir of [account, path.join(account, 'agent')])
      for (const e of await readDirSafe(dir))
        if (e.isFile() && isRecordName(e.name)) out.push(path.join(dir, e.name));
  return out;
}

const storageDir = (record: string): string => record.slice(0, -'.json'.length);

/** The record's JSON object; throws with what is wrong. */
async function readRecord(file: string): Promise<Record<string, JsonValue>> {
  const v: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
  if (!isJsonObject(v)) throw new Error('not a JSON object');
  if (typeof v.sessionId !== 'string' || v.sessionId === '') throw new Error('it has no "sessionId"');
  return v;
}

/** `<storage>/.claude/projects/<any project>/<cliSessionId>.jsonl`: the project folder is searched, never rebuilt (the app shortens long ones). */
async function transcriptFile(dir: string, cli: string): Promise<string | undefined> {
  const projects = path.join(dir, '.claude', 'projects');
  for (const p of await readDirSafe(projects)) {
    const file = path.join(projects, p.name, `${cli}.jsonl`);
    if (p.isDirectory() && (await fs.stat(file).catch(() => undefined))?.isFile()) return file;
  }
  return undefined;
}

const readLines = async (file: string | undefined, warnings: Warning[]): Promise<JsonValue[]> => {
  if (file === undefined) return [];
  const out: JsonValue[] = [];
  (await fs.readFile(file, 'utf8')).split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as JsonValue);
    } catch {
      warnings.push({ source: file, line: i + 1, message: `not JSON; ${SKIPPED_LINE}` });
    }
  });
  return out;
};

/**
 * The files that hold a session's text (Harness `textFiles`): its record, its transcript and its
 * audit log, those there (readSession's files). A record that cannot be read is given alone: its
 * full read says why.
 */
export async function coworkTextFiles(record: string): Promise<string[]> {
  const dir = storageDir(record);
  const header = await readRecord(record).catch(() => undefined);
  const cli = typeof header?.cliSessionId === 'string' ? header.cliSessionId : undefined;
  const transcript = cli !== undefined ? await transcriptFile(dir, cli) : undefined;
  const audit = path.join(dir, 'audit.jsonl');
  const hasAudit = (await fs.stat(audit).catch(() => undefined))?.isFile() === true;
  return [record, ...(transcript !== undefined ? [transcript] : []), ...(hasAudit ? [audit] : [])];
}

/** A session's document parts, read from its record. */
async function readSession(record: string, warnings: Warning[]) {
  const header = await readRecord(record);
  const dir = storageDir(record);
  const cli = typeof header.cliSessionId === 'string' ? header.cliSessionId : undefined;
  const file = cli !== undefined ? await transcriptFile(dir, cli) : undefined;
  const transcript = await readLines(file, warnings);
  const audit = await readLines(
    (await fs.stat(path.join(dir, 'audit.jsonl')).catch(() => undefined))
      ? path.join(dir, 'audit.jsonl')
      : undefined,
    [],
  );
  return { header, transcript, audit, source: file ?? record };
}

/** The account tree a new session goes to: the named one, else the one whose newest record is youngest. */
async function writeAccount(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  const named = envValue(env, COWORK_ACCOUNT_ENV);
  if (named !== undefined) {
    const parts = named.split('/');
    if (parts.length !== 2 || !parts.every(isUuid))
      throw new Error(`${COWORK_ACCOUNT_ENV} must be "<org uuid>/<account uuid>", not "${named}"`);
    return path.join(root, ...parts);
  }
  let best: { dir: string; at: number } | undefined;
  for (const dir of await accountDirs(root)) {
    let at = 0;
    for (const e of await readDirSafe(dir))
      if (isRecordName(e.name)) at = Math.max(at, (await fs.stat(path.join(dir, e.name))).mtimeMs);
    if (best === undefined || at > best.at) best = { dir, at };
  }
  if (best === undefined)
    throw new Error(
      `no Cowork account folder under ${root}: the Claude desktop app has not run Cowork here. Start a Cowork task in the app once, or use --out`,
    );
  return best.dir;
}

export function coworkStore(env: NodeJS.ProcessEnv = process.env): SavingStore {
  const root = coworkRoot(env);
  const find = async (id: string): Promise<string | undefined> =>
    (await recordFiles(root)).find((f) => path.basename(f, '.json') === id);
  return {
    async discover(options): Promise<DiscoverResult> {
      const files = await recordFiles(root);
      const sessions: SessionSummary[] = [];
      const warnings: Warning[] = [];
      if (files.length === 0) return { sessions, warnings };
      // The transcript is Claude Code's: its codec counts the messages (loaded only when there are sessions).
      const [{ coworkCodec }, { builtDocument }] = await Promise.all([
        import('./codec.ts'),
        import('../json-document.ts'),
      ]);
      let done = 0;
      for (const file of files) {
        try {
          const s = await readSession(file, []);
          const t = coworkCodec.toCommon(
            builtDocument({ header: s.header, transcript: s.transcript, audit: [] }),
            {
              sessionId: path.basename(file, '.json'),
            },
          );
          const last = millisTime(s.header.lastActivityAt) ?? t.messages.at(-1)?.timestamp;
          sessions.push({
            id: t.meta.id,
            harness: HARNESS,
            locator: file,
            messageCount: t.messages.length,
            ...(t.meta.title !== undefined ? { title: t.meta.title } : {}),
            ...(last !== undefined ? { lastActivity: last } : {}),
          });
        } catch (e) {
          warnings.push({
            source: file,
            message: `not a Cowork session record (${(e as Error).message}); skipped, as the app skips it. If it was a session, restore the file from a backup (the app writes a JSON object with a "sessionId"); if not, move it out of ${path.dirname(file)} to stop this warning`,
          });
        }
        options?.onProgress?.(++done, files.length);
      }
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      const f = await find(id);
      return f === undefined ? [] : [f];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const record = await find(id);
      if (record === undefined)
        throw new Error(`cowork: no session ${id} under ${root}; run \`txcript list\` to see the ids`);
      const warnings: Warning[] = [];
      const s = await readSession(record, warnings);
      const [{ coworkCodec }, { builtDocument }] = await Promise.all([
        import('./codec.ts'),
        import('../json-document.ts'),
      ]);
      const doc = builtDocument({ header: s.header, transcript: s.transcript, audit: s.audit });
      return loadResult(coworkCodec, doc, { id, source: s.source }, warnings);
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const [{ cliSessionIdFor, coworkCodec, coworkSessionId, transcriptText }, { coworkSession }] =
        await Promise.all([import('./codec.ts'), import('./records.ts')]);
      const id = coworkSessionId(sessionUuid(transcript.meta.id));
      assertSafeSessionId(id, HARNESS);
      const session = coworkSession(
        coworkCodec.fromCommon({ ...transcript, meta: { ...transcript.meta, id } }),
      )!;
      const cli = cliSessionIdFor(id);
      const cwd = typeof session.header.cwd === 'string' ? session.header.cwd : '';
      const account = await writeAccount(root, env);
      const record = path.join(account, `${id}.json`);
      const dir = storageDir(record);
      if ((await find(id)) !== undefined || (await fs.stat(dir).catch(() => undefined)) !== undefined)
        throw new FileExistsError(record);
      await fs.mkdir(account, { recursive: true, mode: 0o700 });
      const temp = await fs.mkdtemp(path.join(account, `.${id}.`));
      try {
        const project = path.join(temp, '.claude', 'projects', claudeProjectDirName(cwd));
        await fs.mkdir(project, { recursive: true, mode: 0o700 });
        // The app's working folders for a task: where it keeps uploads and writes results.
        await fs.mkdir(path.join(temp, 'outputs'), { mode: 0o700 });
        await fs.mkdir(path.join(temp, 'uploads'), { mode: 0o700 });
        await fs.writeFile(path.join(project, `${cli}.jsonl`), transcriptText(session.transcript), {
          mode: 0o600,
        });
        await fs.rename(temp, dir);
      } finally {
        await fs.rm(temp, { recursive: true, force: true });
      }
      try {
        await createFileAtomic(record, JSON.stringify(session.header));
      } catch (e) {
        await fs.rm(dir, { recursive: true, force: true });
        throw e;
      }
      return { id, locator: record };
    },
  };
}

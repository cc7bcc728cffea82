/**
 * A uid per agent when the box runs as root (docs/sandbox.md, "A uid per
 * agent"). Each agent's sandbox processes run as a uid of their own, from a
 * range the box owns: the `sendbox` entry of /etc/subuid when there is one,
 * else the documented default. The kernel then keeps agents apart by uid:
 * `/proc/<pid>/environ` and `/proc/<pid>/cwd` of one agent's commands are
 * closed to every other uid, and RLIMIT_NPROC counts each agent alone.
 *
 * Which agent has which uid is recorded machine-wide (every box on the
 * machine allocates from the same range) in a small SQLite registry, and in
 * the sandbox folder's owner: an agent keeps its uid across restarts, a moved
 * data dir keeps its uids, and a uid is handed to a new agent only after the
 * folder of the agent it belonged to is gone and its processes are killed.
 * Fresh uids are used before released ones, so reuse is rare.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { lchown, lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { killProcesses, processesOfUids, processesOfUidsSync } from './leftovers.ts';

export interface UidRange {
  first: number;
  count: number;
  /** Where the range comes from, for messages. */
  source: string;
}

/**
 * 0x70000000 + 64 Ki: systemd documents 1879048192–2147352575 as unallocated
 * (https://systemd.io/UIDS-GIDS/), clear of users (≤ 60000), its dynamic
 * users, the usual /etc/subuid blocks (from 100000) and nspawn's container
 * ranges (524288–1879048191).
 */
export const DEFAULT_UID_RANGE: UidRange = {
  first: 1_879_048_192,
  count: 65_536,
  source: 'the default range (docs/sandbox.md)',
};

/** The /etc/subuid name whose entry reserves the box's range. */
export const SUBUID_NAME = 'sendbox';

/** Where the machine-wide registry lives when the box runs as root. */
export const DEFAULT_UID_REGISTRY = '/var/lib/sendbox/sandbox-uids.db';

/** The box's range cannot be used; `fix` says what the operator can do. */
export class UidRangeError extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
    this.name = 'UidRangeError';
  }
}

const RANGE_FIX =
  `Reserve a free range for sendbox in /etc/subuid, one line \`${SUBUID_NAME}:<first uid>:<count>\` ` +
  '(for example `sendbox:1879048192:65536`), clear of every user and group and of the other lines there; ' +
  'then restart sendbox.';

interface IdEntry {
  name: string;
  first: number;
  count: number;
}

/** `name:first:count` lines of /etc/subuid (comments and malformed lines skipped). */
function subordinateEntries(text: string): IdEntry[] {
  const out: IdEntry[] = [];
  for (const line of text.split('\n')) {
    const match = /^([^:#\s][^:]*):(\d+):(\d+)\s*$/.exec(line.trim());
    if (match) out.push({ name: match[1]!, first: Number(match[2]), count: Number(match[3]) });
  }
  return out;
}

/** `name:x:id:...` lines of /etc/passwd or /etc/group, as one-id entries. */
function databaseEntries(text: string): IdEntry[] {
  const out: IdEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    const id = Number(fields[2]);
    if (fields.length >= 3 && fields[2] !== '' && Number.isInteger(id))
      out.push({ name: fields[0]!, first: id, count: 1 });
  }
  return out;
}

const overlaps = (a: { first: number; count: number }, b: { first: number; count: number }) =>
  a.first < b.first + b.count && b.first < a.first + a.count;

/**
 * The box's range from the text of /etc/subuid, /etc/passwd and /etc/group:
 * the `sendbox` entry, else the default; refused when it is malformed or any
 * user, group or other subordinate range overlaps it (their files would be
 * the agents').
 */
export function chooseUidRange(files: { subuid: string; passwd: string; group: string }): UidRange {
  const subordinate = subordinateEntries(files.subuid);
  const own = subordinate.find((entry) => entry.name === SUBUID_NAME);
  const range: UidRange = own
    ? { first: own.first, count: own.count, source: `/etc/subuid (${SUBUID_NAME}:${own.first}:${own.count})` }
    : DEFAULT_UID_RANGE;
  // Below 65536 live users, system groups and nobody; from 2^31 tools read uids as negative.
  if (range.count < 2 || range.first < 65_536 || range.first + range.count > 2 ** 31) {
    throw new UidRangeError(
      `the uid range of ${range.source} is unusable: it must hold at least two uids (one is the start-up ` +
        "probe's), between 65536 and 2147483647",
      RANGE_FIX,
    );
  }
  const clash =
    databaseEntries(files.passwd).find((user) => overlaps(user, range)) ??
    databaseEntries(files.group).find((group) => overlaps(group, range));
  if (clash) {
    throw new UidRangeError(
      `the uid range of ${range.source} holds the id ${clash.first} of ${JSON.stringify(clash.name)}; ` +
        "agents' files would be theirs",
      RANGE_FIX,
    );
  }
  const other = subordinate.find((entry) => entry.name !== SUBUID_NAME && overlaps(entry, range));
  if (other) {
    throw new UidRangeError(
      `the uid range of ${range.source} overlaps /etc/subuid's range for ${JSON.stringify(other.name)} ` +
        `(${other.first}:${other.count})`,
      RANGE_FIX,
    );
  }
  return range;
}

/** The box's range on this machine (reads /etc/subuid, /etc/passwd, /etc/group). */
export async function machineUidRange(etc = '/etc'): Promise<UidRange> {
  const read = (name: string) => readFile(path.join(etc, name), 'utf8').catch(() => '');
  return chooseUidRange({
    subuid: await read('subuid'),
    passwd: await read('passwd'),
    group: await read('group'),
  });
}

interface Row {
  uid: number;
  sandbox: string | null;
}

export class SandboxUids {
  /** Sandbox folder (as given and as its real path) → uid, for the launches of this box. */
  private readonly known = new Map<string, number>();
  /** Agents get the uids below this one; the range's last uid is the start-up probe's. */
  private readonly end: number;

  private constructor(
    readonly range: UidRange,
    private readonly db: Database.Database,
  ) {
    this.end = range.first + range.count - 1;
  }

  /** The uid the start-up probe runs as: never an agent's, so nothing of an agent sees or stops it. */
  get probeUid(): number {
    return this.end;
  }

  /** Opens (or creates, root-only) the registry file. */
  static open(range: UidRange, registryFile = DEFAULT_UID_REGISTRY): SandboxUids {
    mkdirSync(path.dirname(registryFile), { recursive: true, mode: 0o700 });
    const db = new Database(registryFile);
    // Every box of the machine allocates here: wait for another's short transaction.
    db.pragma('busy_timeout = 10000');
    db.exec(
      'CREATE TABLE IF NOT EXISTS sandbox_uid (' +
        'uid INTEGER PRIMARY KEY, ' +
        // The folder's real path; NULL once released (its agent deleted, its folder gone).
        'sandbox TEXT UNIQUE, ' +
        'changed_at INTEGER NOT NULL)',
    );
    return new SandboxUids(range, db);
  }

  close(): void {
    this.db.close();
  }

  /** The uid this box gave the folder (after `assign`), if any. */
  uidOf(sandboxDir: string): number | undefined {
    return this.known.get(path.resolve(sandboxDir));
  }

  /**
   * The agent's uid for its sandbox folder: the one recorded for the folder,
   * else the folder owner's when that uid is in the range and free (a data dir
   * moved or a registry lost), else a new one. The folder, and everything in
   * it (never following a link), then belongs to that uid.
   */
  async assign(sandboxDir: string): Promise<number> {
    const real = await realpath(sandboxDir);
    const owner = (await lstat(real)).uid;
    const uid = this.db.transaction(() => this.claim(real, owner)).immediate();
    if (owner !== uid) await chownTree(real, uid);
    this.known.set(path.resolve(sandboxDir), uid);
    this.known.set(real, uid);
    return uid;
  }

  /**
   * Frees the uid of a deleted agent: its processes are killed and the uid may
   * go to a new agent later (fresh uids first). Call it once the folder is gone.
   */
  async release(sandboxDir: string): Promise<void> {
    const uid = this.uidOf(sandboxDir);
    if (uid === undefined) return;
    await killProcesses(await processesOfUids(new Set([uid])));
    this.db
      .prepare('UPDATE sandbox_uid SET sandbox = NULL, changed_at = ? WHERE uid = ?')
      .run(Date.now(), uid);
    for (const [dir, known] of this.known) if (known === uid) this.known.delete(dir);
  }

  /** The uids of the folders below `root` (a data dir's `sandboxes/`), for the start-up sweep. */
  uidsUnder(root: string): Set<number> {
    const prefix = root.endsWith(path.sep) ? root : root + path.sep;
    const rows = this.db
      .prepare('SELECT uid FROM sandbox_uid WHERE substr(sandbox, 1, ?) = ?')
      .all(prefix.length, prefix) as Array<{ uid: number }>;
    return new Set(rows.map((row) => row.uid).filter((uid) => this.inRange(uid)));
  }

  private inRange(uid: number): boolean {
    return uid >= this.range.first && uid < this.end;
  }

  /** Runs inside an immediate transaction: one box at a time decides. */
  private claim(real: string, owner: number): number {
    const byPath = this.db.prepare('SELECT uid FROM sandbox_uid WHERE sandbox = ?').get(real) as
      { uid: number } | undefined;
    if (byPath && this.inRange(byPath.uid)) return byPath.uid;
    // Out of a range the operator has since changed: forget it and choose again.
    if (byPath) this.db.prepare('DELETE FROM sandbox_uid WHERE uid = ?').run(byPath.uid);
    if (this.inRange(owner)) {
      const row = this.db.prepare('SELECT uid, sandbox FROM sandbox_uid WHERE uid = ?').get(owner) as
        Row | undefined;
      if (!row || row.sandbox === null || !holds(row.sandbox, owner)) return this.record(owner, real);
    }
    return this.record(this.fresh() ?? this.reusable(), real);
  }

  private record(uid: number, real: string): number {
    this.db
      .prepare(
        'INSERT INTO sandbox_uid (uid, sandbox, changed_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT(uid) DO UPDATE SET sandbox = excluded.sandbox, changed_at = excluded.changed_at',
      )
      .run(uid, real, Date.now());
    return uid;
  }

  /** The lowest uid of the range never recorded, if any. */
  private fresh(): number | null {
    const row = this.db
      .prepare(
        'SELECT candidate FROM (SELECT ? AS candidate UNION ALL ' +
          'SELECT uid + 1 FROM sandbox_uid WHERE uid >= ? AND uid + 1 < ?) ' +
          'WHERE candidate NOT IN (SELECT uid FROM sandbox_uid) ORDER BY candidate LIMIT 1',
      )
      .get(this.range.first, this.range.first, this.end) as { candidate: number } | undefined;
    return row ? row.candidate : null;
  }

  /**
   * A uid whose agent is gone, longest gone first: released by its box, or
   * recorded for a folder that no longer exists or no longer belongs to it (a
   * data dir removed without deleting its agents). Its processes are killed
   * first, so nothing of the old agent runs on under the new one.
   */
  private reusable(): number {
    const rows = this.db
      .prepare('SELECT uid, sandbox FROM sandbox_uid WHERE uid >= ? AND uid < ? ORDER BY changed_at')
      .iterate(this.range.first, this.end) as IterableIterator<Row>;
    for (const row of rows) {
      if (row.sandbox !== null && holds(row.sandbox, row.uid)) continue;
      killProcessesNow(row.uid);
      return row.uid;
    }
    throw new UidRangeError(
      `all ${this.range.count - 1} agent uids of ${this.range.source} belong to existing agents' sandbox folders`,
      `Delete agents you no longer need, or reserve a larger range: ${RANGE_FIX}`,
    );
  }
}

/** The folder still exists and belongs to the uid. */
function holds(folder: string, uid: number): boolean {
  try {
    return lstatSync(folder).uid === uid;
  } catch {
    return false;
  }
}

/** Inside the registry's transaction (synchronous): SIGKILL every process of the uid. */
function killProcessesNow(uid: number): void {
  for (const pid of processesOfUidsSync(uid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

/** Hands a folder and everything in it to `uid` (gid the same), never following a link. */
export async function chownTree(dir: string, uid: number): Promise<void> {
  await lchown(dir, uid, uid);
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid);
    else await lchown(child, uid, uid);
  }
}

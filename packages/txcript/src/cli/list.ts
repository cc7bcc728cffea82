/**
 * `txcript list`: sessions newest first, subagents under their parent, as a
 * table for people or a stable JSON array for programs (docs/cli.md).
 */
import type { SessionSummary } from '../harness/types.ts';
import type { Colors } from './colors.ts';
import type { CliContext } from './context.ts';
import { type ListedSession, listSessions } from './sessions.ts';
import { parseWhen } from './when.ts';

export interface ListOptions {
  /** false (`--no-cache`): read every source; the stores' summary caches are neither used nor updated. */
  cache?: boolean;
  from?: string;
  json?: boolean;
  limit?: number;
  since?: string;
  until?: string;
}

/** One row of `list --json`. Field names and types are a public contract (docs/cli.md). */
export interface ListRow {
  id: string;
  harness: string;
  title: string | null;
  messages: number | null;
  last_activity: string | null;
  parent: string | null;
  locator: string;
}

interface OrderedRow {
  row: ListRow;
  depth: number;
}

function activityMs(s: SessionSummary): number {
  if (s.lastActivity === undefined) return -Infinity;
  const t = Date.parse(s.lastActivity);
  return Number.isNaN(t) ? -Infinity : t;
}

function toRow(s: ListedSession): ListRow {
  return {
    id: s.summary.id,
    harness: s.harness.id,
    title: s.summary.title ?? null,
    messages: s.summary.messageCount ?? null,
    last_activity: s.summary.lastActivity ?? null,
    parent: s.summary.parentId ?? null,
    locator: s.summary.locator,
  };
}

/** A session with its sort facts computed once (a list may hold thousands). */
interface Entry {
  session: ListedSession;
  key: string;
  at: number;
  /** The most recent activity in the session's family (itself and its listed subagents). */
  familyAt: number;
}

/** Most recent first; no known activity last; ties by id so the order is stable. */
function byTime(a: number, b: number, ea: Entry, eb: Entry): number {
  if (a !== b) return b > a ? 1 : -1;
  const ia = ea.session.summary.id;
  const ib = eb.session.summary.id;
  return ia < ib ? -1 : ia > ib ? 1 : 0;
}

/**
 * The rows to show: filtered by time, newest first, at most `limit`, then
 * each subagent moved under its parent (when the parent is listed too). A
 * family sorts by its most recent member, so an active subagent lifts its parent.
 */
export function orderSessions(
  sessions: readonly ListedSession[],
  options: { since?: Date; until?: Date; limit?: number } = {},
): OrderedRow[] {
  const since = options.since?.getTime() ?? -Infinity;
  const until = options.until?.getTime() ?? Infinity;
  const bounded = options.since !== undefined || options.until !== undefined;
  const keyOf = (harness: string, id: string) => `${harness}\u0000${id}`;
  const kept: Entry[] = sessions
    .map((session) => {
      const at = activityMs(session.summary);
      return { session, key: keyOf(session.harness.id, session.summary.id), at, familyAt: at };
    })
    .filter((e) => !bounded || (e.at !== -Infinity && e.at >= since && e.at <= until))
    .sort((a, b) => byTime(a.at, b.at, a, b));
  if (options.limit !== undefined) kept.length = Math.min(kept.length, options.limit);

  const listed = new Map<string, Entry>();
  for (const e of kept) listed.set(e.key, e);
  const children = new Map<string, Entry[]>();
  const roots: Entry[] = [];
  for (const e of kept) {
    const parent = e.session.summary.parentId;
    const parentKey = parent === undefined ? undefined : keyOf(e.session.harness.id, parent);
    if (parentKey !== undefined && parentKey !== e.key && listed.has(parentKey)) {
      const list = children.get(parentKey) ?? [];
      list.push(e);
      children.set(parentKey, list);
    } else roots.push(e);
  }
  // Family recency, children before parents; `inProgress` stops a parent cycle.
  const done = new Set<string>();
  const inProgress = new Set<string>();
  const settle = (e: Entry): number => {
    const mine = children.get(e.key);
    if (mine === undefined || done.has(e.key) || inProgress.has(e.key)) return e.familyAt;
    inProgress.add(e.key);
    for (const c of mine) e.familyAt = Math.max(e.familyAt, settle(c));
    inProgress.delete(e.key);
    done.add(e.key);
    return e.familyAt;
  };
  for (const e of kept) settle(e);
  const byFamily = (a: Entry, b: Entry): number =>
    a.familyAt !== b.familyAt ? byTime(a.familyAt, b.familyAt, a, b) : byTime(a.at, b.at, a, b);

  const out: OrderedRow[] = [];
  const seen = new Set<string>();
  const visit = (e: Entry, depth: number): void => {
    if (seen.has(e.key)) return;
    seen.add(e.key);
    out.push({ row: toRow(e.session), depth });
    const mine = children.get(e.key);
    if (mine !== undefined) for (const c of mine.sort(byFamily)) visit(c, depth + 1);
  };
  for (const r of roots.sort(byFamily)) visit(r, 0);
  // A parent cycle leaves its members unreached: list them at the top level.
  for (const e of kept) visit(e, 0);
  return out;
}

export function formatJson(rows: readonly OrderedRow[]): string {
  return `${JSON.stringify(
    rows.map((r) => r.row),
    null,
    2,
  )}\n`;
}

const TITLE_WIDTH = 60;

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** A timestamp as local `YYYY-MM-DD HH:MM`. */
export function formatLocalMinute(iso: string | null): string {
  if (iso === null) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

function truncate(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

/** Id prefixes shown on a terminal are at least this long (git's short hashes are 7). */
const MIN_ID_PREFIX = 8;
/** A title on a terminal keeps at least this many characters, however narrow it is. */
const MIN_TITLE_WIDTH = 16;

/**
 * Each id's shortest prefix that no other id starts with (at least MIN_ID_PREFIX characters): what
 * `view` and the other commands accept for it. `ids` must hold every session they look among.
 */
export function uniquePrefixes(ids: readonly string[]): Map<string, string> {
  const sorted = [...new Set(ids)].sort();
  const common = (a: string | undefined, b: string): number => {
    if (a === undefined) return 0;
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return i;
  };
  const out = new Map<string, string>();
  sorted.forEach((id, i) => {
    const shared = Math.max(common(sorted[i - 1], id), common(sorted[i + 1], id));
    out.set(id, id.slice(0, Math.max(MIN_ID_PREFIX, shared + 1)));
  });
  return out;
}

export interface TableFit {
  /** The terminal's width: the table is made to fit it. */
  columns: number;
  /** Every id the commands resolve a prefix among (not only the rows shown). */
  allIds: readonly string[];
}

/**
 * The session table. On a terminal (`fit`) it fits the width: ids are cut to their shortest unique
 * prefix and titles to what is left of the line; piped, every id is whole.
 */
export function formatTable(rows: readonly OrderedRow[], c: Colors, fit?: TableFit): string {
  const prefixes = fit === undefined ? undefined : uniquePrefixes(fit.allIds);
  const header = { id: 'ID', harness: 'HARNESS', messages: 'MSGS', when: 'LAST ACTIVITY', title: 'TITLE' };
  const width = {
    id: header.id.length,
    harness: header.harness.length,
    messages: header.messages.length,
    when: header.when.length,
  };
  // One pass for the cells and the column widths: a table may have thousands of rows.
  const cells = rows.map(({ row, depth }) => {
    const cell = {
      id: `${depth === 0 ? '' : `${'  '.repeat(depth - 1)}└ `}${prefixes?.get(row.id) ?? row.id}`,
      depth,
      harness: row.harness,
      messages: row.messages === null ? '' : String(row.messages),
      when: formatLocalMinute(row.last_activity),
      title: row.title,
    };
    if (cell.id.length > width.id) width.id = cell.id.length;
    if (cell.harness.length > width.harness) width.harness = cell.harness.length;
    if (cell.messages.length > width.messages) width.messages = cell.messages.length;
    if (cell.when.length > width.when) width.when = cell.when.length;
    return cell;
  });
  const fixed = width.id + width.harness + width.messages + width.when + 4 * 2;
  const titleWidth =
    fit === undefined
      ? TITLE_WIDTH
      : Math.max(MIN_TITLE_WIDTH, Math.min(TITLE_WIDTH, fit.columns - fixed - 1));
  const line = (id: string, harness: string, messages: string, when: string, title: string): string =>
    `${id}  ${harness}  ${messages}  ${when}  ${title}`.trimEnd();
  let out = `${c.bold(
    line(
      header.id.padEnd(width.id),
      header.harness.padEnd(width.harness),
      header.messages.padStart(width.messages),
      header.when.padEnd(width.when),
      header.title,
    ),
  )}\n`;
  for (const x of cells) {
    const id = x.id.padEnd(width.id);
    out += `${line(
      x.depth === 0 ? id : c.dim(id),
      c.cyan(x.harness.padEnd(width.harness)),
      x.messages.padStart(width.messages),
      x.when.padEnd(width.when),
      x.title === null ? c.dim('(untitled)') : truncate(x.title, titleWidth),
    )}\n`;
  }
  return out;
}

export async function listCommand(ctx: CliContext, options: ListOptions): Promise<void> {
  const now = ctx.io.now();
  const since = options.since === undefined ? undefined : parseWhen(options.since, '--since', now);
  const until = options.until === undefined ? undefined : parseWhen(options.until, '--until', now);
  const { sessions, warnings } = await listSessions(ctx, options.from, { cache: options.cache });
  for (const w of warnings) ctx.warnListing(w);
  const rows = orderSessions(sessions, { since, until, limit: options.limit });
  if (options.json === true) {
    ctx.io.stdout.write(formatJson(rows));
    return;
  }
  if (rows.length === 0) {
    ctx.io.stderr.write(
      `txcript: no sessions found${sessions.length > 0 ? ` (${sessions.length} outside the time bounds)` : ''}\n`,
    );
    return;
  }
  const { isTTY, columns } = ctx.io.stdout;
  const fit =
    isTTY === true && columns !== undefined && columns > 0
      ? { columns, allIds: sessions.map((s) => s.summary.id) }
      : undefined;
  ctx.io.stdout.write(formatTable(rows, ctx.out, fit));
}

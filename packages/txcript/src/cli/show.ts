/**
 * `txcript view` and `txcript export`: find the session, load it (or, for a
 * whole export, stream it), apply the range, and print it for people (view)
 * or as a Simple document (export).
 */
import { commonToSimplePieces } from '../harness/simple/index.ts';
import type { Meta, Transcript } from '../model/common.ts';
import { writeFileAtomic } from '../fs/atomic.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT_RUNTIME } from './errors.ts';
import { writeText } from './output.ts';
import { type Selection, selectRange, splitTarget } from './range.ts';
import { type FoundSession, discoverSessions, resolveSession, scannedHarnesses } from './sessions.ts';
import type { LoadResult, Store, StreamedLoad } from '../harness/types.ts';
import { renderView } from './view.ts';
import { TooLargeToLoadError } from '../fs/memory-budget.ts';

export interface OpenedSession {
  found: FoundSession;
  transcript: Transcript;
  selection: Selection;
  /** Messages whose time the source does not give. */
  untimed?: ReadonlySet<number>;
}

/** A found session and what its store read of it (the whole transcript, or a stream). */
interface Loaded<T> {
  found: FoundSession;
  loaded: T;
}

/**
 * How a session is read from its store, and what the lookup needs to know of
 * the result: its message count and its own title.
 */
interface SessionReader<T> {
  read(store: Store, id: string): Promise<T>;
  facts(loaded: T): { count: number; title: string | undefined };
}

/** The whole transcript (`view`, a ranged `export`, `continue`, MCP). */
const wholeReader: SessionReader<LoadResult> = {
  read: (store, id) => store.load(id),
  facts: ({ transcript }) => ({ count: transcript.messages.length, title: transcript.meta.title }),
};

/**
 * The transcript streamed where the store can (Store `stream`), so that an
 * export of any length runs in bounded memory; else loaded and handed out
 * from memory.
 */
const streamedReader: SessionReader<StreamedLoad> = {
  async read(store, id) {
    const streamed = await store.stream?.(id);
    if (streamed !== undefined) return streamed;
    const { transcript, source, warnings } = await store.load(id);
    return {
      meta: transcript.meta,
      count: transcript.messages.length,
      warnings,
      source,
      messages: () => transcript.messages,
    };
  },
  facts: ({ meta, count }) => ({ count, title: meta.title }),
};

/**
 * The session `id` is the exact id of, read without listing the store,
 * when the store can say where it lives (Store `locate`) and what the
 * listing would decide is sure: one file, whose conversation is listed
 * (it has a message) and titled by itself (the listing's title is not
 * needed). undefined: go the listing's way, which gives the same result
 * whenever this gives one.
 */
async function readByExactId<T>(
  ctx: CliContext,
  id: string,
  from: string,
  reader: SessionReader<T>,
): Promise<Loaded<T> | undefined> {
  const [harness] = await scannedHarnesses(ctx, from);
  const store = harness?.store?.(ctx.io.env);
  const files = await store?.locate?.(id);
  if (harness === undefined || store === undefined || files?.length !== 1) return undefined;
  let loaded: T;
  try {
    loaded = await reader.read(store, id);
  } catch {
    return undefined; // the listing may not list it at all: its error is the one to give
  }
  const { count, title } = reader.facts(loaded);
  if (count === 0 || title === undefined) return undefined;
  return { found: { summary: { id, harness: harness.id, locator: files[0]! }, harness }, loaded };
}

/** The session `id` names among every listed session (sessions.ts), read. */
async function findAndRead<T>(
  ctx: CliContext,
  id: string,
  from: string | undefined,
  reader: SessionReader<T>,
): Promise<Loaded<T>> {
  const { sessions, warnings } = await discoverSessions(ctx, from);
  let found: FoundSession;
  try {
    found = resolveSession(id, sessions, from);
  } catch (err) {
    // Problems met while scanning other sessions are noise, unless they may explain a miss.
    if (err instanceof CliError && err.exitCode === EXIT_RUNTIME)
      for (const w of warnings) ctx.warnListing(w);
    throw err;
  }
  const store = found.harness.store!(ctx.io.env);
  try {
    return { found, loaded: await reader.read(store, found.summary.id) };
  } catch (err) {
    if (err instanceof TooLargeToLoadError) {
      throw new CliError({
        what: `could not load ${found.harness.id} session ${found.summary.id}: ${err.problem}`,
        where: err.path,
        todo: err.remedy,
      });
    }
    throw new CliError({
      what: `could not load ${found.harness.id} session ${found.summary.id}: ${err instanceof Error ? err.message : String(err)}`,
      where: found.summary.locator,
      todo: 'the locator above is where the store looked; "txcript list --json" shows every session\'s',
    });
  }
}

/** The session `id` names, read: by its exact id when `from` names the harness and that is sure, else by listing. */
async function readSession<T>(
  ctx: CliContext,
  id: string,
  from: string | undefined,
  reader: SessionReader<T>,
): Promise<Loaded<T>> {
  return (
    (from === undefined ? undefined : await readByExactId(ctx, id, from, reader)) ??
    (await findAndRead(ctx, id, from, reader))
  );
}

/** The store's list title (e.g. a Grok Bot profile name) names the session when the transcript has none. */
function titled(meta: Meta, found: FoundSession): Meta {
  const title = meta.title ?? found.summary.title;
  return title === undefined || title === meta.title ? meta : { ...meta, title };
}

/** `<id>[#range]` → the loaded session and the messages the range picks. */
export async function openSession(
  ctx: CliContext,
  target: string,
  from: string | undefined,
): Promise<OpenedSession> {
  const { id, range } = splitTarget(target);
  const { found, loaded } = await readSession(ctx, id, from, wholeReader);
  for (const w of loaded.warnings) ctx.warn(w);
  const selection = selectRange(range, loaded.transcript.messages);
  const meta = titled(loaded.transcript.meta, found);
  const transcript = meta === loaded.transcript.meta ? loaded.transcript : { ...loaded.transcript, meta };
  return { found, transcript, selection, ...(loaded.untimed ? { untimed: loaded.untimed } : {}) };
}

export async function viewCommand(
  ctx: CliContext,
  target: string,
  options: { from?: string },
): Promise<void> {
  const { found, transcript, selection, untimed } = await openSession(ctx, target, options.from);
  ctx.io.stdout.write(
    renderView(transcript, {
      harness: found.harness.id,
      colors: ctx.out,
      selection,
      ...(untimed !== undefined ? { untimed } : {}),
    }),
  );
}

export async function exportCommand(
  ctx: CliContext,
  target: string,
  options: { from?: string; out?: string },
): Promise<void> {
  const { id, range } = splitTarget(target);
  let text: Iterable<string>;
  if (range === undefined) {
    // The whole session: streamed from its source where the store can, one message at a time.
    const { found, loaded } = await readSession(ctx, id, options.from, streamedReader);
    for (const w of loaded.warnings) ctx.warn(w);
    text = commonToSimplePieces({ meta: titled(loaded.meta, found), messages: loaded.messages() });
  } else {
    // A range is checked against the session's tool pairs: it is loaded whole.
    const { transcript, selection } = await openSession(ctx, target, options.from);
    text = commonToSimplePieces({
      meta: transcript.meta,
      messages: transcript.messages.slice(selection.start, selection.end),
    });
  }
  if (options.out === undefined) {
    await writeText(ctx.io.stdout, text);
    return;
  }
  try {
    await writeFileAtomic(options.out, text);
  } catch (err) {
    throw new CliError({
      what: `could not write the export: ${err instanceof Error ? err.message : String(err)}`,
      where: options.out,
      todo: 'check that the folder exists and is writable',
    });
  }
}

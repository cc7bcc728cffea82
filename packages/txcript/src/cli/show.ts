/**
 * `txcript view` and `txcript export`: find the session, load it, apply the
 * range, and print it for people (view) or as a Simple document (export).
 */
import { commonToSimplePieces } from '../harness/simple/index.ts';
import type { Transcript } from '../model/common.ts';
import { writeFileAtomic } from '../fs/atomic.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT_RUNTIME } from './errors.ts';
import { writeText } from './output.ts';
import { type Selection, selectRange, splitTarget } from './range.ts';
import { type FoundSession, discoverSessions, resolveSession, scannedHarnesses } from './sessions.ts';
import type { LoadResult } from '../harness/types.ts';
import { renderView } from './view.ts';
import { TooLargeToLoadError } from '../fs/memory-budget.ts';

export interface OpenedSession {
  found: FoundSession;
  transcript: Transcript;
  selection: Selection;
  /** Messages whose time the source does not give. */
  untimed?: ReadonlySet<number>;
}

/** A found session and what its store loaded. */
interface Loaded {
  found: FoundSession;
  loaded: LoadResult;
}

/**
 * The session `id` is the exact id of, loaded without listing the store,
 * when the store can say where it lives (Store `locate`) and what the
 * listing would decide is sure: one file, whose conversation is listed
 * (it has a message) and titled by itself (the listing's title is not
 * needed). undefined: go the listing's way, which gives the same result
 * whenever this gives one.
 */
async function loadByExactId(ctx: CliContext, id: string, from: string): Promise<Loaded | undefined> {
  const [harness] = await scannedHarnesses(ctx, from);
  const store = harness?.store?.(ctx.io.env);
  const files = await store?.locate?.(id);
  if (harness === undefined || store === undefined || files?.length !== 1) return undefined;
  let loaded: LoadResult;
  try {
    loaded = await store.load(id);
  } catch {
    return undefined; // the listing may not list it at all: its error is the one to give
  }
  const { transcript } = loaded;
  if (transcript.messages.length === 0 || transcript.meta.title === undefined) return undefined;
  return { found: { summary: { id, harness: harness.id, locator: files[0]! }, harness }, loaded };
}

/** The session `id` names among every listed session (sessions.ts), loaded. */
async function findAndLoad(ctx: CliContext, id: string, from: string | undefined): Promise<Loaded> {
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
    return { found, loaded: await store.load(found.summary.id) };
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

/** `<id>[#range]` → the loaded session and the messages the range picks. */
export async function openSession(
  ctx: CliContext,
  target: string,
  from: string | undefined,
): Promise<OpenedSession> {
  const { id, range } = splitTarget(target);
  const { found, loaded } =
    (from === undefined ? undefined : await loadByExactId(ctx, id, from)) ??
    (await findAndLoad(ctx, id, from));
  for (const w of loaded.warnings) ctx.warn(w);
  const selection = selectRange(range, loaded.transcript.messages);
  // The store's list title (e.g. a Grok Bot profile name) names the session when the transcript has none.
  const { meta } = loaded.transcript;
  const title = meta.title ?? found.summary.title;
  const transcript =
    title === undefined ? loaded.transcript : { ...loaded.transcript, meta: { ...meta, title } };
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
  const { transcript, selection } = await openSession(ctx, target, options.from);
  // Made one message at a time as it is written, never whole.
  const text = commonToSimplePieces({
    meta: transcript.meta,
    messages: transcript.messages.slice(selection.start, selection.end),
  });
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

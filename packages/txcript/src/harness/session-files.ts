/**
 * What the stores that keep one session per JSONL file (Claude Code, Codex)
 * do alike: summarise every file for a listing, where one unreadable file is
 * a warning and never the end of the listing; and load one file through the
 * harness's text codec and codec, collecting both layers' warnings.
 */
import { promises as fs } from 'node:fs';
import { assertLoadable } from '../fs/memory-budget.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SessionSummary,
  TextCodec,
  Warning,
  WarningCodec,
} from './types.ts';

/**
 * Summarise `files` one by one. `summarize` returns a summary, or a reason the
 * file is not a session (a warning); a thrown error is reported as unreadable.
 */
export async function summarizeSessionFiles<F>(
  files: readonly F[],
  pathOf: (file: F) => string,
  summarize: (file: F) => Promise<SessionSummary | string>,
  options?: DiscoverOptions,
): Promise<DiscoverResult> {
  const sessions: SessionSummary[] = [];
  const warnings: Warning[] = [];
  let done = 0;
  for (const file of files) {
    try {
      const summary = await summarize(file);
      if (typeof summary === 'string') warnings.push({ source: pathOf(file), message: summary });
      else sessions.push(summary);
    } catch (e) {
      warnings.push({ source: pathOf(file), message: `unreadable, skipped: ${(e as Error).message}` });
    }
    options?.onProgress?.(++done, files.length);
  }
  return { sessions, warnings };
}

/** Read a session file and convert it to Common; `warnings` come first (e.g. from finding the file). */
export async function loadSessionFile<R>(
  file: string,
  id: string,
  harness: { text: TextCodec<R>; codec: WarningCodec<R> },
  warnings: Warning[] = [],
): Promise<LoadResult> {
  assertLoadable(file, (await fs.stat(file)).size);
  const parsed = harness.text.parse(await fs.readFile(file, 'utf8'), file);
  warnings.push(...parsed.warnings);
  const transcript = harness.codec.toCommon(parsed.records, {
    sessionId: id,
    source: file,
    onWarning: (w) => warnings.push(w),
  });
  return { transcript, source: file, warnings };
}

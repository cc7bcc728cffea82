/** A session's records read through its codec into what `Store.load` returns. */
import type { LoadResult, Warning, WarningCodec } from './types.ts';

/**
 * `records` as Common: the codec's warnings join `warnings` (the reading's
 * own, first), and the messages it could not date are marked untimed.
 * `timestamp` is the start when the records give none (the file's time).
 */
export function loadResult<R>(
  codec: WarningCodec<R>,
  records: R,
  at: { id: string; source: string; timestamp?: string },
  warnings: Warning[] = [],
): LoadResult {
  const untimed = new Set<number>();
  const transcript = codec.toCommon(records, {
    sessionId: at.id,
    source: at.source,
    ...(at.timestamp !== undefined ? { timestamp: at.timestamp } : {}),
    untimed,
    onWarning: (w) => warnings.push(w),
  });
  return { transcript, source: at.source, warnings, ...(untimed.size > 0 ? { untimed } : {}) };
}

/**
 * Scan progress on stderr, only once a scan has run longer than a delay
 * (1 s by default) so quick commands stay quiet. On a terminal it is one line
 * rewritten in place and erased at the end; elsewhere (a log, a pipe) a line
 * at most once a second. Never on stdout.
 */
import type { OutStream } from './context.ts';

export interface ProgressOptions {
  stream: OutStream;
  delayMs: number;
  label: string;
  now?: () => number;
}

export interface Progress {
  /** One source's progress (a harness's store); sources are summed. */
  update(source: string, done: number, total: number): void;
  finish(): void;
}

const NON_TTY_INTERVAL_MS = 1_000;
const TTY_INTERVAL_MS = 100;

export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const started = now();
  const counts = new Map<string, { done: number; total: number }>();
  let shownOnTty = false;
  let lastLine = -Infinity;
  const text = (): string => {
    let done = 0;
    let total = 0;
    for (const c of counts.values()) {
      done += c.done;
      total += c.total;
    }
    return `${options.label} ${done}/${total}`;
  };
  return {
    update(source, done, total) {
      counts.set(source, { done, total });
      const t = now();
      if (t - started < options.delayMs) return;
      const tty = options.stream.isTTY === true;
      if (t - lastLine < (tty ? TTY_INTERVAL_MS : NON_TTY_INTERVAL_MS)) return;
      lastLine = t;
      if (tty) {
        options.stream.write(`\r\x1b[K${text()}`);
        shownOnTty = true;
      } else {
        options.stream.write(`${text()}\n`);
      }
    },
    finish() {
      if (shownOnTty) options.stream.write('\r\x1b[K');
      shownOnTty = false;
    },
  };
}

/** The delay before progress shows: `TXCRIPT_PROGRESS_DELAY_MS` (ms), default 1000. */
export function progressDelay(env: Record<string, string | undefined>): number {
  const raw = env.TXCRIPT_PROGRESS_DELAY_MS;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : 1_000;
}

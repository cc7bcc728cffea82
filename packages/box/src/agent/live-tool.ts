/**
 * A tool call while it runs, for the page's live row: its name and line, when it started, and the
 * tail of its output so far. Sent as `tool` host events at most every `intervalMs` (a command that
 * prints a flood costs a few events a second), then once more when the call ends. The tail is
 * scrubbed like any output, and its end like a draft, so no secret, not even the start of one,
 * leaves the host.
 */
import type { Scrubber } from '../secrets/scrub.ts';
import type { HostEvent } from './events.ts';

export type ToolEvent = Extract<HostEvent, { type: 'tool' }>;

/** The characters of output shown; the raw window kept is larger, so a secret cut at its start is whole. */
export const LIVE_TAIL_CHARS = 2000;
const RAW_WINDOW_CHARS = 16_000;

export interface LiveTool {
  /** More output (stdout and stderr as they come). */
  output(chunk: string): void;
  end(): void;
}

export function liveTool(
  call: { agentId: string; toolCallId: string; name: string; title: string; startedAt: number },
  scrubber: Scrubber,
  emit: (event: ToolEvent) => void,
  intervalMs = 250,
): LiveTool {
  let raw = '';
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const send = (running: boolean): void => {
    const shown = scrubber.draft(scrubber.text(raw));
    emit({ type: 'tool', ...call, running, tail: shown.slice(-LIVE_TAIL_CHARS) });
  };
  send(true);
  return {
    output(chunk) {
      if (ended) return;
      raw = (raw + chunk).slice(-RAW_WINDOW_CHARS);
      timer ??= setTimeout(() => {
        timer = undefined;
        if (!ended) send(true);
      }, intervalMs);
    },
    end() {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      send(false);
    },
  };
}

/**
 * Paces the drafts of a streamed `send_message`: a model can stream thousands of deltas a second,
 * and each draft told costs the whole text so far downstream (scrubbed, framed as an event, drawn
 * by the page). The first draft of a call is told at once, then at most one per `intervalMs`,
 * the latest text each time; `flush` tells what is pending (the call's arguments ended), `stop`
 * drops it (the step failed or was stopped: the user never saw that text, so it is not told).
 */
export class DraftPacer {
  private readonly pending = new Map<string, string>();
  private readonly lastTold = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly tell: (draft: { toolCallId: string; text: string }) => void,
    private readonly intervalMs: number,
  ) {}

  draft(toolCallId: string, text: string): void {
    const last = this.lastTold.get(toolCallId);
    if (last === undefined || performance.now() - last >= this.intervalMs) {
      this.pending.delete(toolCallId);
      this.told(toolCallId, text);
      return;
    }
    this.pending.set(toolCallId, text);
    this.timer ??= setTimeout(
      () => {
        this.timer = null;
        this.flush();
      },
      this.intervalMs - (performance.now() - last),
    );
  }

  /** Tells the pending text of one call, or of every call. */
  flush(toolCallId?: string): void {
    for (const [id, text] of [...this.pending]) {
      if (toolCallId !== undefined && id !== toolCallId) continue;
      this.pending.delete(id);
      this.told(id, text);
    }
    if (this.pending.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  stop(): void {
    this.pending.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private told(toolCallId: string, text: string): void {
    this.lastTold.set(toolCallId, performance.now());
    this.tell({ toolCallId, text });
  }
}

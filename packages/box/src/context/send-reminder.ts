/**
 * Counts consecutive tool calls that are not send_message. When the count
 * reaches the threshold (default 6, seed 000 "SendMessageReminderMiddleware"),
 * the next model step gets a reminder; the count resets on every delivered
 * send and after each reminder.
 */
export const DEFAULT_SEND_REMINDER_EVERY = 6;

export class SendReminderCounter {
  private count = 0;

  constructor(readonly threshold: number = DEFAULT_SEND_REMINDER_EVERY) {
    if (!Number.isInteger(threshold) || threshold < 1) {
      throw new Error(`sendReminderEvery must be a positive integer, got ${threshold}`);
    }
  }

  get consecutive(): number {
    return this.count;
  }

  /** Records one tool call; `delivered` is true for a send_message that reached the user. */
  record(toolName: string, delivered: boolean): void {
    if (toolName === 'send_message') {
      if (delivered) this.count = 0;
      return;
    }
    this.count += 1;
  }

  /** True once the threshold is reached; consumes it (the count starts over). */
  takeReminder(): boolean {
    if (this.count < this.threshold) return false;
    this.count = 0;
    return true;
  }
}

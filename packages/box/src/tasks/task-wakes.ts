/**
 * Background work that ends while its agent is idle wakes the agent, as Grok Bot does: a durable
 * inbox input of its own kind (`task-wake`, agent/inputs.ts) whose turn starts like a prompt's.
 * While a turn runs nothing is sent: the model may `await` the task in that turn; what it did not
 * see by the turn's end wakes it then.
 *
 * Exactly once across a crash: the tasks a wake covers are marked with its nonce in the task book
 * before the inbox accepts it, and `told` after; the inbox keeps every nonce it accepted. A crash
 * in between leaves the mark, and the next open accepts the same nonce again, which the inbox
 * answers as a repeat if it was already in.
 */
import { randomUUID } from 'node:crypto';
import type { WakeDoor } from '../agent/extension.ts';
import type { TaskRecord, TaskStore } from './task-book.ts';
import { taskWakeText } from './wake-prompt.ts';

export class TaskWakes {
  private door: WakeDoor | null = null;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly book: TaskStore,
    /** The agent's scrubber now (a child's result or a tail may quote a secret saved since). */
    private readonly scrub: (text: string) => string,
    /** A command's last output, scrubbed (undefined for a child). */
    private readonly tail: (record: TaskRecord) => Promise<string | undefined>,
  ) {}

  /** The agent is ready for turns (opened, or its turns ran out): wake it for what it was not told. */
  ready(door: WakeDoor): void {
    this.door = door;
    this.flush();
  }

  /** Wakes the agent if it is free and work ended untold; one flush at a time. */
  flush(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.wakeOnce()
      .catch(() => undefined) // a full disk: the marks stay, the next flush tries again
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.flush();
        }
      });
  }

  /** Settles when no flush runs (tests). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async wakeOnce(): Promise<void> {
    const door = this.door;
    if (!door?.free) return;
    // A wake a crash (or a full disk) left between its mark and the inbox's acceptance first.
    for (const [nonce, tasks] of this.book.waking()) await this.send(door, nonce, tasks);
    const untold = this.book.untold();
    if (untold.length === 0 || !door.free) return;
    const nonce = `task-wake:${randomUUID()}`;
    this.book.setNotice(
      untold.map((task) => task.id),
      `wake:${nonce}`,
    );
    // The tasks this wake took: in a cluster another worker's session of the agent may have taken
    // some since they were read (its book marks only untold ones), and it wakes the agent for them.
    const taken = this.book.waking().get(nonce) ?? [];
    if (taken.length > 0) await this.send(door, nonce, taken);
  }

  private async send(door: WakeDoor, nonce: string, tasks: TaskRecord[]): Promise<void> {
    const woken = await Promise.all(tasks.map(async (record) => ({ record, tail: await this.tail(record) })));
    const text = this.scrub(taskWakeText(woken));
    await door.wake(nonce, { kind: 'task-wake', text });
    this.book.setNotice(
      tasks.map((task) => task.id),
      'told',
    );
  }
}

/**
 * Tool calls still waiting for their result, for codecs whose native results
 * may carry no call id: such a result answers the oldest unanswered call
 * (of its tool name, where the format pairs by name: Grok Bot C3; of any
 * name in Simple). A result with an id answers that call wherever it is.
 */
export class PendingCalls {
  /** Per name: call ids in call order, and how many at the head are already answered. */
  private readonly byName = new Map<string, { ids: string[]; head: number }>();
  private readonly answered = new Set<string>();

  add(name: string, id: string): void {
    const queue = this.byName.get(name);
    if (queue === undefined) this.byName.set(name, { ids: [id], head: 0 });
    else queue.ids.push(id);
  }

  /** The oldest unanswered call of this name, without answering it. */
  peek(name: string): string | undefined {
    const queue = this.byName.get(name);
    if (queue === undefined) return undefined;
    const { ids } = queue;
    if (this.answered.size > 0)
      while (queue.head < ids.length && this.answered.has(ids[queue.head]!)) queue.head++;
    return ids[queue.head];
  }

  /** Answer the oldest unanswered call of this name, and return its id. */
  take(name: string): string | undefined {
    const id = this.peek(name);
    // The head moves past it: no need to remember it as answered.
    if (id !== undefined) this.byName.get(name)!.head++;
    return id;
  }

  /** Answer the call with this id, wherever it is in its queue. */
  answer(id: string): void {
    this.answered.add(id);
  }
}

/**
 * A turn that ends without any delivered send_message gets exactly one
 * reminder and one more step; if it still ends without one, the ledger records
 * a notice so the user sees the agent stopped without replying.
 */
export type TextOnlyVerdict = 'done' | 'remind' | 'notice';

export class TextOnlyGuard {
  private reminded = false;

  /** Called when the model ends a step without tool calls. */
  onTurnEnd(deliveredInTurn: number): TextOnlyVerdict {
    if (deliveredInTurn > 0) return 'done';
    if (!this.reminded) {
      this.reminded = true;
      return 'remind';
    }
    return 'notice';
  }
}

/**
 * The question book: the widgets and secret-requests an agent has delivered,
 * and which of them the user has answered. Everything in it is derived from
 * the ledger (a `send-message` entry asks, a user `message` with
 * `respondedValue` answers), so a restart finds the same open questions.
 */
import type { SecretTarget, Widget } from '@sendbox/protocol';
import { HostError } from './types.ts';

/** A widget or secret-request the user can answer, from its `send-message` entry. */
export interface Question {
  id: string;
  seq: number;
  kind: 'widget' | 'secret-request';
  prompt: string;
  widget?: Widget;
  target?: SecretTarget;
}

export class QuestionBook {
  private readonly questions = new Map<string, Question>();
  private readonly answered = new Set<string>();

  clear(): void {
    this.questions.clear();
    this.answered.clear();
  }

  /** Notes a delivered send; only a widget or a secret-request asks something. Returns the question, if any. */
  noteSend(id: string, seq: number, message: unknown): Question | null {
    const question = questionOf(id, seq, message);
    if (question) this.questions.set(question.id, question);
    return question;
  }

  markAnswered(id: string): void {
    this.answered.add(id);
  }

  /** Takes an answer back (its write failed), so the user can answer again. */
  unmarkAnswered(id: string): void {
    this.answered.delete(id);
  }

  /** The question a user may answer now: 404 when there is none of that kind, 409 once answered. */
  open(agentId: string, messageId: string, kind: Question['kind']): Question {
    const question = this.questions.get(messageId);
    if (!question || question.kind !== kind) {
      throw new HostError(`agent ${agentId} has no ${kind} message with id ${messageId}`, 404);
    }
    if (this.answered.has(messageId)) {
      throw new HostError(`${kind} ${messageId} was already answered; an answer is accepted once`, 409);
    }
    return question;
  }

  /** True when the newest question is unanswered and no user message came after it (the turn awaits the user). */
  awaitsAnswerAfter(lastUserSeq: number): boolean {
    let last: Question | undefined;
    for (const question of this.questions.values()) if (!last || question.seq > last.seq) last = question;
    return last !== undefined && !this.answered.has(last.id) && last.seq > lastUserSeq;
  }
}

function questionOf(id: string, seq: number, message: unknown): Question | null {
  if (!isObject(message)) return null;
  if (message.type === 'widget' && isObject(message.widget)) {
    const widget = message.widget as unknown as Widget;
    return { id, seq, kind: 'widget', prompt: widget.prompt, widget };
  }
  if (message.type === 'secret-request' && isObject(message.secretRequest)) {
    const request = message.secretRequest as { label: string; target: SecretTarget };
    return { id, seq, kind: 'secret-request', prompt: request.label, target: request.target };
  }
  return null;
}

/** The answer as the model reads it: a pick's value (its label when it has none), several picks one per line. */
export function widgetAnswerText(widget: Widget, answer: string | string[]): string {
  const picks = (Array.isArray(answer) ? answer : [answer]).map((a) => a.trim()).filter((a) => a !== '');
  if (picks.length === 0) throw new HostError('the answer is empty: pick an option', 400);
  if (picks.length > 1 && !widget.multiSelect) {
    throw new HostError('this question takes one answer; it does not allow several picks', 400);
  }
  const values = new Map(widget.options.map((o) => [o.label, o.value ?? o.label]));
  for (const option of widget.options) values.set(option.value ?? option.label, option.value ?? option.label);
  return picks
    .map((pick) => {
      const value = values.get(pick);
      if (value !== undefined) return value;
      if (widget.allowCustom) return pick;
      throw new HostError(
        `"${pick}" is not one of the options (${widget.options.map((o) => o.label).join(', ')}) and this question takes no custom answer`,
        400,
      );
    })
    .join('\n');
}

/** The environment variable a secret target fills. */
export function envNameFor(target: SecretTarget): string {
  if (target.kind === 'env') return target.name;
  return `${target.platform}_${target.field}`
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .replace(/^(\d)/, '_$1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The question book: the widgets and secret-requests an agent has delivered,
 * and which of them the user has answered. Everything in it is derived from
 * the ledger (a `send-message` entry asks, a user `message` answers it:
 * `questionAnswers` in protocol/answers.ts), so a restart finds the same
 * open questions.
 */
import {
  questionAnswers,
  widgetAnswer,
  WidgetAnswerError,
  type AnswerableEntry,
  type SecretTarget,
  type Widget,
  type WidgetAnswer,
} from '@sendbox/protocol';
import { HostError } from './errors.ts';

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

  get(id: string): Question | undefined {
    return this.questions.get(id);
  }

  /** Marks answered every question a user message of `entries` answers. */
  noteAnswers(entries: readonly object[]): void {
    for (const id of questionAnswers(entries as readonly AnswerableEntry[]).keys()) this.answered.add(id);
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

  /** The questions the user has not answered yet, oldest first. */
  openQuestions(): Question[] {
    return [...this.questions.values()].filter((q) => !this.answered.has(q.id)).sort((a, b) => a.seq - b.seq);
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

/** The answer to a widget in Grok Bot's shape (labels and values, protocol/answers.ts), or a 400 saying why it does not fit. */
export function widgetAnswerOf(widget: Widget, answer: string | string[]): WidgetAnswer {
  try {
    return widgetAnswer(widget, answer);
  } catch (error) {
    if (error instanceof WidgetAnswerError) throw new HostError(error.message, 400);
    throw error;
  }
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

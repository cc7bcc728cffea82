/**
 * Answers to widgets and secret requests, in Grok Bot's shape
 * (grok-bot-format.md §7, VR kind samples): the user `message` entry holds
 * the label the user clicked in `content`, the option's value in
 * `respondedValue` and `widgetSkipped`; several picks are joined with
 * newlines (IX-69085389140). sendbox adds `replyTo` naming the answered send,
 * so a reader never has to guess; readers of files without it link an answer
 * to the latest open question before it. Also the marker for text the host
 * writes in the user role (`[SAND_HIDDEN_PROMPT]`, §4), which every reader hides.
 */
import type { Widget } from './stored.ts';

/** Grok Bot's marker for host-injected text in a user turn (§4). */
export const HIDDEN_PROMPT_MARKER = '[SAND_HIDDEN_PROMPT]';

/** Text the host writes in the user role, marked so no reader shows it as the user's words. */
export function hiddenPrompt(text: string): string {
  return `${HIDDEN_PROMPT_MARKER}${text}`;
}

/** What the model is told when the user saves a secret: the host speaking, so a hidden prompt. */
export function secretSavedPrompt(envName: string): string {
  return hiddenPrompt(
    `The user saved the secret. Your tools receive it as the environment variable ${envName} ` +
      `(for example "$${envName}" in shell). Its value is never shown to you; do not ask for it in chat.`,
  );
}

/** The host's note of files the user attached to a prompt: after the prompt, as a hidden prompt. */
export function attachedFilesPrompt(paths: readonly string[]): string {
  return hiddenPrompt(paths.map((p) => `[The user attached a file: ${p}]`).join('\n'));
}

/** A widget answer: what the user clicked (labels) and what those options stand for (values). */
export interface WidgetAnswer {
  /** The labels, one per line: the ledger `content` and the JSONL answer text. */
  content: string;
  /** The values (a label when the option has none; a custom answer as typed), one per line. */
  respondedValue: string;
}

/** Why an answer does not fit its widget, in words for the person who gave it. */
export class WidgetAnswerError extends Error {
  override readonly name = 'WidgetAnswerError';
}

/** The answer for picks given by label or value (or typed, when the widget allows it). Throws WidgetAnswerError. */
export function widgetAnswer(widget: Widget, answer: string | readonly string[]): WidgetAnswer {
  const picks = (typeof answer === 'string' ? [answer] : answer).map((a) => a.trim()).filter((a) => a !== '');
  if (picks.length === 0) throw new WidgetAnswerError('the answer is empty: pick an option');
  if (picks.length > 1 && widget.multiSelect !== true) {
    throw new WidgetAnswerError('this question takes one answer; it does not allow several picks');
  }
  const chosen = picks.map((pick) => {
    const option =
      widget.options.find((o) => o.label === pick) ??
      widget.options.find((o) => (o.value ?? o.label) === pick);
    if (option !== undefined) return { label: option.label, value: option.value ?? option.label };
    if (widget.allowCustom === true) return { label: pick, value: pick };
    throw new WidgetAnswerError(
      `"${pick}" is not one of the options (${widget.options.map((o) => o.label).join(', ')}) and this question takes no custom answer`,
    );
  });
  return {
    content: chosen.map((c) => c.label).join('\n'),
    respondedValue: chosen.map((c) => c.value).join('\n'),
  };
}

/** The fields of a ledger entry that answering needs (any reader's entry type has them). */
export interface AnswerableEntry {
  id: string;
  kind: string;
  role?: string;
  replyTo?: string;
  respondedValue?: string;
  widgetSkipped?: boolean;
  message?: { type?: string };
}

function isQuestion(entry: AnswerableEntry): boolean {
  return (
    entry.kind === 'send-message' &&
    (entry.message?.type === 'widget' || entry.message?.type === 'secret-request')
  );
}

/**
 * Which user message answers each widget and secret-request send, by the send's id (first answer
 * wins). A message answers the open question its `replyTo` names; an answer-shaped message
 * (`respondedValue` or `widgetSkipped`) without one answers the latest open widget before it; a
 * `respondedValue` naming an open question is an older sendbox ledger's link.
 */
export function questionAnswers<E extends AnswerableEntry>(entries: readonly E[]): Map<string, E> {
  const answers = new Map<string, E>();
  const open: E[] = [];
  for (const entry of entries) {
    if (isQuestion(entry)) {
      open.push(entry);
      continue;
    }
    if (entry.kind !== 'message' || entry.role !== 'user') continue;
    let at = -1;
    if (entry.replyTo !== undefined) at = open.findIndex((q) => q.id === entry.replyTo);
    if (at < 0 && entry.respondedValue !== undefined)
      at = open.findIndex((q) => q.id === entry.respondedValue);
    if (
      at < 0 &&
      entry.replyTo === undefined &&
      (entry.respondedValue !== undefined || entry.widgetSkipped !== undefined)
    ) {
      for (let i = open.length - 1; i >= 0 && at < 0; i--) if (open[i]!.message?.type === 'widget') at = i;
    }
    if (at < 0) continue;
    const [question] = open.splice(at, 1);
    answers.set(question!.id, entry);
  }
  return answers;
}

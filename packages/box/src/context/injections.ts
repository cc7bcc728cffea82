/**
 * What the host adds to the conversation when it calls the model, and never
 * writes to the transcript: the send_message guidance after every user turn
 * (seed 000: "appended to the end of every user turn (as user role)"), the
 * non-send reminder after N consecutive tool calls without a delivered send
 * (SendMessageReminderMiddleware, default 6), and the reminder after a step
 * that ended with plain text only.
 *
 * They are rebuilt from the history on every model call, from the
 * configuration and the counters the history implies, so a live turn and a
 * history read back from the JSONL after a restart give the model the same
 * messages, and the files hold only what Grok Bot's own files hold (no real
 * record carries guidance or reminders; docs/formats/grok-bot.md).
 */
import { nonSendReminder, textOnlyTurnReminder, wrapSystemReminder } from '@sendbox/protocol';
import type { ModelMessage } from '../providers/types.ts';
import type { ContextLayer } from './model-call.ts';
import { SendReminderCounter } from './send-reminder.ts';

export interface InjectionConfig {
  /** The guidance appended to each user turn; absent when the send_message feature is off. */
  guidance: string | undefined;
  /** Non-send tool calls in a row before the reminder. */
  sendReminderEvery: number;
}

type ToolMessage = Extract<ModelMessage, { role: 'tool' }>;
type AssistantMessage = Extract<ModelMessage, { role: 'assistant' }>;

function reminder(text: string): ModelMessage {
  return { role: 'user', content: [{ type: 'text', text: wrapSystemReminder(text) }] };
}

/** A send_message result the model read as delivered ("Message sent to user…"). */
function delivered(part: ToolMessage['content'][number]): boolean {
  return part.type === 'tool-result' && part.toolName === 'send_message' && part.output.type === 'text';
}

function hasToolCalls(message: AssistantMessage): boolean {
  return typeof message.content !== 'string' && message.content.some((part) => part.type === 'tool-call');
}

/**
 * The messages the model reads for `history` (what the transcript holds): each user turn with the
 * guidance after it; the non-send reminder after the tool results that reach the threshold, when the
 * turn goes on; the text-only reminder after a text-only step the turn goes on from. The history is
 * not changed.
 */
export function withInjections(history: readonly ModelMessage[], config: InjectionConfig): ModelMessage[] {
  const out: ModelMessage[] = [];
  const counter = new SendReminderCounter(config.sendReminderEvery);
  const textOnly = reminder(textOnlyTurnReminder());
  const nonSend = reminder(nonSendReminder(counter.threshold));
  history.forEach((message, i) => {
    const next = history[i + 1];
    // The turn goes on after this message: more of the same turn follows, or the model is called now.
    const goesOn = next === undefined || next.role !== 'user';
    if (message.role === 'user') {
      const parts =
        typeof message.content === 'string'
          ? [{ type: 'text' as const, text: message.content }]
          : message.content;
      out.push(
        config.guidance === undefined
          ? message
          : {
              role: 'user',
              content: [...parts, { type: 'text', text: wrapSystemReminder(config.guidance) }],
            },
      );
      return;
    }
    out.push(message);
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        counter.record(part.toolName, delivered(part));
      }
      if (goesOn && counter.takeReminder()) out.push(nonSend);
    } else if (message.role === 'assistant' && !hasToolCalls(message) && goesOn) {
      out.push(textOnly);
    }
  });
  return out;
}

/** The guidance and reminders as the first layer of the per-call view (model-call.ts). */
export function injectionsLayer(config: InjectionConfig): ContextLayer {
  return { name: 'guidance and reminders', messages: (messages) => withInjections(messages, config) };
}

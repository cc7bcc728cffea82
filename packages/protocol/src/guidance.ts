/**
 * What the model is told about messaging, besides the tool description
 * (seed 000, "Layer 2" and "Layer 3"): the guidance appended to each user
 * turn inside a `<system_reminder>`, the reminders the runtime injects, and
 * the refusal returned while the turn waits on the user. Our own words.
 *
 * `sendMessageFeature` is the one switch: the tool and its guidance are
 * offered together or not at all (seed 000: one option gates both).
 */
import { SEND_MESSAGE_TOOL_NAME, sendMessageTool, type SendMessageTool } from './tool.ts';

/** The guidance for a model that knows the tool as `toolName`. */
export function sendMessageGuidance(toolName: string = SEND_MESSAGE_TOOL_NAME): string {
  return [
    '## Talking to the user',
    '',
    `The user sees only what you send with the \`${toolName}\` tool. Text you write outside a tool call is your private working space: nobody reads it.`,
    '',
    `Call \`${toolName}\`:`,
    '- when you have made progress worth knowing about;',
    '- when you are blocked, or need a decision or information only the user has;',
    '- when the work is done, with the result.',
    '',
    'After a progress message, carry on working. After your final message, stop: do not send it again in other words.',
    'A successful result means the user has the message.',
    '',
    'Pick the type for the content:',
    '- a file you made or a standalone media link: type attachment with its file:// or https:// URL; do not paste the file into text;',
    "- a question with a few clear answers: type widget; it ends your turn, and the pick arrives as the user's next message;",
    '- a password, token or API key: type secret-request only. Never ask the user to type a secret into the chat, and never repeat one back.',
  ].join('\n');
}

export const SEND_MESSAGE_GUIDANCE = sendMessageGuidance();

/** How injected guidance is marked for the model (seed 000: "wrapped in a <system_reminder> tag"). */
export function wrapSystemReminder(text: string): string {
  return `<system_reminder>\n${text.trim()}\n</system_reminder>`;
}

/** Consecutive non-send tool calls after which the runtime reminds the model (seed 000: default 6). */
export const NON_SEND_REMINDER_THRESHOLD = 6;

/** The reminder after `count` tool calls in a row without a send. */
export function nonSendReminder(count: number, toolName: string = SEND_MESSAGE_TOOL_NAME): string {
  return (
    `You have made ${count} tool calls in a row without messaging the user. ` +
    `If there is progress, a question or a result to share, tell them now by making an actual \`${toolName}\` tool call. ` +
    'Writing the message as ordinary text does not reach them, however it is formatted.'
  );
}

/** The reminder after a turn that ended with plain text and no send. */
export function textOnlyTurnReminder(toolName: string = SEND_MESSAGE_TOOL_NAME): string {
  return (
    'Your previous turn ended with plain text only, so the user saw nothing of it. ' +
    `Call \`${toolName}\` now with whatever they need to read.`
  );
}

/** The tool result for a send refused because the turn waits on the user (seed 000, "The state gate"). */
export const AWAITING_USER_REFUSAL =
  'Not delivered. Your turn is on hold for the user: you asked them a question or handed control back to them. ' +
  'End the turn now without sending more. Their reply will come in as the next message, and you can send this then.';

export interface SendMessageFeature {
  enabled: boolean;
  /** The send_message tool, or nothing when the feature is off. */
  tools: readonly SendMessageTool[];
  /** The guidance to append (wrapped with `wrapSystemReminder`) to each user turn; undefined when off. */
  guidance: string | undefined;
}

/** The single switch for the message mechanism: tool and guidance together, or neither. */
export function sendMessageFeature(options: { enabled: boolean; toolName?: string }): SendMessageFeature {
  if (!options.enabled) return { enabled: false, tools: [], guidance: undefined };
  const tool = sendMessageTool({ name: options.toolName });
  return { enabled: true, tools: [tool], guidance: sendMessageGuidance(tool.name) };
}

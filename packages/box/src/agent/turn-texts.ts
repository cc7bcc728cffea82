/** What an agent's turn tells the user (notices) and the model (reminders, results) when it ends early. */
import type { TurnTexts } from './turn.ts';

/** Told to the user when a turn the box was running is found without its end (a crash). */
export const BOX_STOPPED_NOTICE =
  'The box stopped during this turn, so the agent did not finish it. Send your message again if you still need an answer.';

export const TURN_TEXTS: TurnTexts = {
  noReplyNotice: 'The agent stopped without sending you a reply.',
  modelFailedNotice: (message) => `The model call failed, so the agent stopped: ${message}`,
  stepLimitNotice: (steps) => `The agent was stopped after ${steps} model steps in one turn.`,
  stoppedNotice: 'You stopped the turn.',
  stoppedReminder:
    'The user pressed Stop and ended your previous turn before it finished: the model call or tool that was running was interrupted. Do not resume that work unless the user asks.',
  stoppedSendSeen: (text) =>
    `You were writing a message when they pressed Stop; they saw it cut off, exactly as follows: """${text}""".`,
  interruptedResult: 'Interrupted: the user stopped the turn before this call finished.',
};

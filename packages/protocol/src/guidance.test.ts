import { describe, expect, test } from 'vitest';
import {
  AWAITING_USER_REFUSAL,
  NON_SEND_REMINDER_THRESHOLD,
  SEND_MESSAGE_GUIDANCE,
  nonSendReminder,
  sendMessageFeature,
  sendMessageGuidance,
  textOnlyTurnReminder,
  wrapSystemReminder,
} from './guidance.ts';

describe('sendMessageFeature: one switch for tool and guidance', () => {
  test('enabled: the tool and the guidance, both', () => {
    const feature = sendMessageFeature({ enabled: true });
    expect(feature.enabled).toBe(true);
    expect(feature.tools.map((tool) => tool.name)).toEqual(['send_message']);
    expect(feature.guidance).toBe(SEND_MESSAGE_GUIDANCE);
  });

  test('disabled: neither the tool nor the guidance', () => {
    const feature = sendMessageFeature({ enabled: false });
    expect(feature).toEqual({ enabled: false, tools: [], guidance: undefined });
  });

  test('a model-facing name reaches both the tool and the guidance', () => {
    const feature = sendMessageFeature({ enabled: true, toolName: 'SendMessage' });
    expect(feature.tools[0]?.name).toBe('SendMessage');
    expect(feature.guidance).toContain('`SendMessage` tool');
    expect(feature.guidance).not.toContain('send_message');
  });
});

describe('guidance text', () => {
  test('covers when, pacing, delivery and the type for each kind of content', () => {
    const text = sendMessageGuidance();
    for (const part of [
      'The user sees only what you send with the `send_message` tool',
      'private working space',
      'progress worth knowing about',
      'blocked, or need a decision',
      'when the work is done, with the result',
      'After a progress message, carry on working',
      'After your final message, stop: do not send it again',
      'A successful result means the user has the message',
      'type attachment',
      'type widget',
      'type secret-request only. Never ask the user to type a secret into the chat',
    ]) {
      expect(text).toContain(part);
    }
  });

  test('wrapSystemReminder puts the text between tags on their own lines', () => {
    expect(wrapSystemReminder('  be brief\n')).toBe('<system_reminder>\nbe brief\n</system_reminder>');
  });
});

describe('reminders and refusal', () => {
  test('the non-send reminder counts the calls and asks for a real tool call, not text', () => {
    expect(NON_SEND_REMINDER_THRESHOLD).toBe(6);
    const text = nonSendReminder(6);
    expect(text).toContain('6 tool calls in a row without messaging the user');
    expect(text).toContain('making an actual `send_message` tool call');
    expect(text).toContain('as ordinary text does not reach them');
    expect(nonSendReminder(7, 'SendMessage')).toContain('actual `SendMessage` tool call');
  });

  test('the text-only turn reminder', () => {
    expect(textOnlyTurnReminder()).toBe(
      'Your previous turn ended with plain text only, so the user saw nothing of it. Call `send_message` now with whatever they need to read.',
    );
  });

  test('the awaiting-user refusal says it was not delivered and to wait for the next message', () => {
    expect(AWAITING_USER_REFUSAL).toMatch(/^Not delivered\./);
    expect(AWAITING_USER_REFUSAL).toContain('on hold for the user');
    expect(AWAITING_USER_REFUSAL).toContain('Their reply will come in as the next message');
  });
});

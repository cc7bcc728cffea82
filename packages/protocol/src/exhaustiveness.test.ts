/**
 * Type-level tests: `tsc -p tsconfig.json` checks this file, so a
 * `@ts-expect-error` that stops erroring fails the typecheck. They prove
 * that a send_message type missing from a switch does not compile.
 */
import { expectTypeOf, test } from 'vitest';
import { assertNever, type SEND_MESSAGE_TYPES, type SendMessageType, type StoredMessage } from './stored.ts';
import type { FIELD_OWNER, SendMessageInput, SendMessageRequest } from './send-message-input.ts';

test('the type lists agree: enum constant, stored union, model input, request', () => {
  expectTypeOf<(typeof SEND_MESSAGE_TYPES)[number]>().toEqualTypeOf<SendMessageType>();
  expectTypeOf<StoredMessage['type']>().toEqualTypeOf<SendMessageType>();
  expectTypeOf<SendMessageInput['type']>().toEqualTypeOf<SendMessageType>();
  expectTypeOf<SendMessageRequest['type']>().toEqualTypeOf<SendMessageType>();
});

test('every model input field has an owning type', () => {
  expectTypeOf<keyof typeof FIELD_OWNER>().toEqualTypeOf<Exclude<keyof SendMessageInput, 'type'>>();
});

test('a switch that misses a type cannot reach assertNever', () => {
  // A future type, as it would look before every switch handles it.
  type Future = SendMessageType | 'poll';
  function label(type: Future): string {
    // The lint rule flags the same gap; the point here is that the compiler does too.
    // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check
    switch (type) {
      case 'text':
      case 'attachment':
      case 'widget':
      case 'cursor-agent':
      case 'secret-request':
        return type;
      default:
        // @ts-expect-error 'poll' is not handled, so `type` is not `never` here.
        return assertNever(type);
    }
  }
  expectTypeOf(label).returns.toEqualTypeOf<string>();

  function complete(type: SendMessageType): string {
    switch (type) {
      case 'text':
      case 'attachment':
      case 'widget':
      case 'cursor-agent':
      case 'secret-request':
        return type;
      default:
        return assertNever(type);
    }
  }
  expectTypeOf(complete).parameter(0).toEqualTypeOf<SendMessageType>();
});

test('a total record over the types needs every type', () => {
  // @ts-expect-error 'secret-request' is missing.
  const partial: Record<SendMessageType, number> = { text: 1, attachment: 2, widget: 3, 'cursor-agent': 4 };
  expectTypeOf(partial).toEqualTypeOf<Record<SendMessageType, number>>();
});

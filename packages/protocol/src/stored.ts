/**
 * The stored form of a send_message: what the `store.db` ledger keeps under a
 * `send-message` entry's `message` key and what the UI renders
 * (grok-bot-format.md §6 "Stored form"). Typed by `type`, unlike the JSONL
 * encoding, which flattens everything but text and attachment to text (C9).
 *
 * Schemas are loose: a reader keeps keys it does not know (forward
 * compatibility with newer hosts); the box only ever writes the keys below.
 */
import { z } from 'zod';

export const storedImageSchema = z.looseObject({
  url: z.string(),
  alt: z.string().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
});

export const widgetOptionSchema = z.looseObject({
  label: z.string(),
  value: z.string().optional(),
  description: z.string().optional(),
  style: z.enum(['default', 'primary', 'danger']).optional(),
});

export const widgetSchema = z.looseObject({
  prompt: z.string(),
  helpText: z.string().optional(),
  options: z.array(widgetOptionSchema),
  allowCustom: z.boolean().optional(),
  multiSelect: z.boolean().optional(),
  dismissOnMoveOn: z.boolean().optional(),
});

/** Where a secret goes: a connector's credential field, or an environment variable of the agent's tools. */
export const secretTargetSchema = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('channel-credential'), platform: z.string(), field: z.string() }),
  z.looseObject({ kind: z.literal('env'), name: z.string() }),
]);

export const storedTextSchema = z.looseObject({
  type: z.literal('text'),
  content: z.string(),
  images: z.array(storedImageSchema).optional(),
  reply_to: z.string().optional(),
  channel: z.string().optional(),
});

export const storedAttachmentSchema = z.looseObject({
  type: z.literal('attachment'),
  /** For an ingested file, a `file://` URL into `<agentDir>/attachments/`; else the https URL. */
  url: z.string(),
  file_name: z.string().optional(),
  alt: z.string().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  /** Bytes, media type and SHA-256 (hex) of an ingested file. */
  size: z.number().optional(),
  media_type: z.string().optional(),
  sha256: z.string().optional(),
});

export const storedWidgetSchema = z.looseObject({ type: z.literal('widget'), widget: widgetSchema });

export const storedCursorAgentSchema = z.looseObject({
  type: z.literal('cursor-agent'),
  bcId: z.string(),
  title: z.string().optional(),
});

export const storedSecretRequestSchema = z.looseObject({
  type: z.literal('secret-request'),
  secretRequest: z.looseObject({
    label: z.string(),
    description: z.string().optional(),
    target: secretTargetSchema,
  }),
});

export const storedMessageSchema = z.discriminatedUnion('type', [
  storedTextSchema,
  storedAttachmentSchema,
  storedWidgetSchema,
  storedCursorAgentSchema,
  storedSecretRequestSchema,
]);

export type StoredImage = z.infer<typeof storedImageSchema>;
export type WidgetOption = z.infer<typeof widgetOptionSchema>;
export type Widget = z.infer<typeof widgetSchema>;
export type SecretTarget = z.infer<typeof secretTargetSchema>;
export type StoredText = z.infer<typeof storedTextSchema>;
export type StoredAttachment = z.infer<typeof storedAttachmentSchema>;
export type StoredWidget = z.infer<typeof storedWidgetSchema>;
export type StoredCursorAgent = z.infer<typeof storedCursorAgentSchema>;
export type StoredSecretRequest = z.infer<typeof storedSecretRequestSchema>;
export type StoredMessage = z.infer<typeof storedMessageSchema>;
export type SendMessageType = StoredMessage['type'];

export const SEND_MESSAGE_TYPES = ['text', 'attachment', 'widget', 'cursor-agent', 'secret-request'] as const;

/** Compile-time exhaustiveness: call in the default branch of a switch over a union. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}

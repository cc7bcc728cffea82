/**
 * Ledger entries: the rows of `store.db` `transcript_entries.entry` and what
 * the gateway's `openAgent` and event stream return (grok-bot-format.md §7).
 * The UI renders one bubble per entry, branching on `kind`.
 *
 * The box writes only the kinds below with `message` + `role` (C12). Readers
 * parse loosely and must tolerate kinds they do not know.
 */
import { z } from 'zod';
import { storedMessageSchema } from './stored.ts';

const base = {
  id: z.string(),
  timestampMs: z.number(),
  seq: z.number().optional(),
};

export const messageEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('message'),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  isStreaming: z.boolean().optional(),
  clientNonce: z.string().optional(),
  /** The message this one replies to; for an answer, the widget or secret-request send it answers (answers.ts). */
  replyTo: z.string().optional(),
  /** A widget answer: the picked options' values, one per line (the labels are in `content`; answers.ts). */
  respondedValue: z.string().optional(),
  /** A widget answer: true when the user skipped the question. */
  widgetSkipped: z.boolean().optional(),
  /** True for a user-role message the UI never shows (hidden prompts, injected guidance). */
  hidden: z.boolean().optional(),
  /** sendbox: the user message this prompt replaces (regenerate, edit and resend; revisions.ts). */
  supersedes: z.string().optional(),
});

export const sendMessageEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('send-message'),
  message: storedMessageSchema,
  streaming: z.boolean().optional(),
  /** sendbox: the user pressed Stop while the model wrote it; `message` is what they saw (readers may ignore it). */
  stopped: z.boolean().optional(),
});

export const userAttachmentEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('user-attachment'),
  file_name: z.string(),
  file_path: z.string(),
  batchId: z.string().optional(),
  clientNonce: z.string().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  byteSize: z.number().optional(),
  media_type: z.string().optional(),
  sha256: z.string().optional(),
});

export const toolCallEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('tool-call'),
  name: z.string(),
  status: z.enum(['running', 'success', 'failure', 'error']).or(z.string()),
  summary: z.string().optional(),
});

export const noticeEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('notice'),
  text: z.string(),
  /** sendbox: `error` when something failed (the UI shows it as an error); absent for plain notices. */
  level: z.enum(['info', 'error']).optional(),
  /** sendbox: why the host wrote it (`model-failed`, `step-limit`, `stopped`); readers may ignore it. */
  reason: z.string().optional(),
});

/** Private assistant text: recorded, hidden in the UI behind the thinking toggle (C1). */
export const thinkingEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('thinking'),
  text: z.string(),
});

export const turnEndedEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('turn-ended'),
});

/**
 * Something that happened to the agent itself (§7): `{type: "name-changed", from, to}` when it was
 * renamed; Grok Bot also writes `automation-changed`. Readers show the types they know.
 */
export const eventEntrySchema = z.looseObject({
  ...base,
  kind: z.literal('event'),
  event: z.looseObject({ type: z.string(), from: z.string().optional(), to: z.string().optional() }),
});

export const ledgerEntrySchema = z.discriminatedUnion('kind', [
  messageEntrySchema,
  sendMessageEntrySchema,
  userAttachmentEntrySchema,
  toolCallEntrySchema,
  noticeEntrySchema,
  thinkingEntrySchema,
  turnEndedEntrySchema,
  eventEntrySchema,
]);

export type MessageEntry = z.infer<typeof messageEntrySchema>;
export type SendMessageEntry = z.infer<typeof sendMessageEntrySchema>;
export type UserAttachmentEntry = z.infer<typeof userAttachmentEntrySchema>;
export type ToolCallEntry = z.infer<typeof toolCallEntrySchema>;
export type NoticeEntry = z.infer<typeof noticeEntrySchema>;
export type ThinkingEntry = z.infer<typeof thinkingEntrySchema>;
export type TurnEndedEntry = z.infer<typeof turnEndedEntrySchema>;
export type EventEntry = z.infer<typeof eventEntrySchema>;
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;
export type LedgerKind = LedgerEntry['kind'];

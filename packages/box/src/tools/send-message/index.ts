/**
 * The send_message handler: the three layers of seed 000 in order. The
 * protocol's schema check answers a bad call with model-readable problems;
 * the state gate refuses a send while the turn waits on the user; a
 * `file://` attachment or image is resolved inside the sandbox and ingested
 * into the content-addressed store. Only then does the send get its id.
 */
import { pathToFileURL, fileURLToPath } from 'node:url';
import {
  AWAITING_USER_REFUSAL,
  sendResultError,
  sendResultSuccess,
  toJsonlSendInput,
  toStoredMessage,
  validateSendMessage,
  type SendMessageRequest,
  type StoredImage,
  type StoredMessage,
} from '@sendbox/protocol';
import type { JsonObject, JsonValue } from '@sendbox/txcript';
import type { AttachmentsStore, StoredFile } from '../../stores/attachments.ts';
import { openInSandbox, OutsideSandboxError, withDeadline } from '../../sandbox/paths.ts';
import type { Scrubber } from '../../secrets/scrub.ts';

export interface SendGateContext {
  sandboxDir: string;
  attachments: AttachmentsStore;
  /** A file holding one of the agent's secrets is not delivered. */
  secrets: Scrubber;
  /** True while the turn waits on the user. */
  sendsBlocked(): boolean;
  /** The id the next delivered send gets (`t<N>s<k>`); called only on delivery. */
  nextSendId(): string;
  /**
   * What was delivered in this turn, for the never-twice rule: each send under two keys, the stored
   * form as the model asked for it and `deliveredKey` of what was delivered (which a resumed turn
   * rebuilds from the ledger: agent/turn-resume.ts).
   */
  deliveredInTurn: Map<string, string>;
  now(): number;
}

export type SendOutcome =
  | {
      delivered: true;
      messageId: string;
      stored: StoredMessage;
      /** The JSONL `tool_use.input` (encoder shape, C9). */
      jsonlInput: JsonObject;
      result: JsonObject;
      /** A widget or secret-request: the turn now waits on the user. */
      awaitsUser: boolean;
      request: SendMessageRequest;
    }
  | { delivered: false; jsonlInput: JsonObject; result: JsonObject; reason: string };

export async function handleSendMessage(input: unknown, ctx: SendGateContext): Promise<SendOutcome> {
  const checked = validateSendMessage(input);
  if (!checked.ok) {
    // Never delivered, so there is no encoder shape: keep what the model sent.
    return refused(
      isObject(input) ? (input as JsonObject) : { input: (input ?? null) as JsonValue },
      checked.message,
    );
  }
  const request = checked.value;
  let stored = toStoredMessage(request);
  const jsonlInput = toJsonlSendInput(stored) as unknown as JsonObject;
  if (ctx.sendsBlocked()) return refused(jsonlInput, AWAITING_USER_REFUSAL);

  const key = JSON.stringify(stored);
  const earlier = ctx.deliveredInTurn.get(key);
  if (earlier !== undefined) return refused(jsonlInput, alreadyDelivered(earlier));

  try {
    stored = await ingestFiles(stored, ctx);
  } catch (error) {
    return refused(jsonlInput, `Not delivered: ${(error as Error).message}`);
  }
  const deliveredAs = deliveredKey(stored);
  const same = ctx.deliveredInTurn.get(deliveredAs);
  if (same !== undefined) return refused(jsonlInput, alreadyDelivered(same));

  const messageId = ctx.nextSendId();
  ctx.deliveredInTurn.set(key, messageId);
  ctx.deliveredInTurn.set(deliveredAs, messageId);
  return {
    delivered: true,
    messageId,
    stored,
    jsonlInput,
    result: sendResultSuccess(messageId, ctx.now()),
    awaitsUser: stored.type === 'widget' || stored.type === 'secret-request',
    request,
  };
}

function alreadyDelivered(id: string): string {
  return (
    `Not delivered: this exact message was already delivered in this turn (id: ${id}). ` +
    'The user has it; do not send it again.'
  );
}

/**
 * The never-twice key of a delivered message (as the ledger holds it): its JSON with each ingested
 * file named by its content-addressed file name instead of its path, which is this box's (another
 * worker's copy of the same file has another path).
 */
export function deliveredKey(message: StoredMessage): string {
  return JSON.stringify(message, (name, value: unknown) =>
    name === 'url' && typeof value === 'string' && isFileUrl(value)
      ? `file:${value.slice(value.lastIndexOf('/') + 1)}`
      : value,
  );
}

function refused(jsonlInput: JsonObject, text: string): SendOutcome {
  return { delivered: false, jsonlInput, result: sendResultError(text), reason: text };
}

/** Replaces every `file://` URL of the message with its ingested copy; https URLs stay references. */
async function ingestFiles(message: StoredMessage, ctx: SendGateContext): Promise<StoredMessage> {
  if (message.type === 'attachment' && isFileUrl(message.url)) {
    const file = await ingestFileUrl(message.url, ctx);
    return {
      ...message,
      url: pathToFileURL(file.path).href,
      file_name: file.fileName,
      size: file.size,
      media_type: file.mediaType,
      sha256: file.sha256,
    };
  }
  if (message.type === 'text' && message.images?.some((image) => isFileUrl(image.url))) {
    const images: StoredImage[] = [];
    for (const image of message.images) {
      images.push(
        isFileUrl(image.url)
          ? { ...image, url: pathToFileURL((await ingestFileUrl(image.url, ctx)).path).href }
          : image,
      );
    }
    return { ...message, images };
  }
  return message;
}

async function ingestFileUrl(url: string, ctx: SendGateContext): Promise<StoredFile> {
  let requested: string;
  try {
    requested = fileURLToPath(url);
  } catch {
    throw new Error(
      `${url} is not a valid file:// URL; write it as file:///absolute/path/inside/your/sandbox.`,
    );
  }
  const fileName = requested.split('/').pop() || 'file';
  return withDeadline(
    `Attaching ${url}`,
    async () => {
      let opened;
      try {
        opened = await openInSandbox(ctx.sandboxDir, requested);
      } catch (error) {
        if (error instanceof OutsideSandboxError) throw error;
        throw new Error(`${url}: ${(error as Error).message}`);
      }
      try {
        return await ctx.attachments.ingestOpenFile(opened.handle, opened.info, fileName, {
          secrets: ctx.secrets,
        });
      } finally {
        await opened.handle.close();
      }
    },
    INGEST_TIMEOUT_MS,
  );
}

/** Copying and hashing an attachment of up to the size cap may take a while; a stuck one is given up. */
const INGEST_TIMEOUT_MS = 120_000;

function isFileUrl(url: string): boolean {
  return url.toLowerCase().startsWith('file://');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

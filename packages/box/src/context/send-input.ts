/**
 * How a `send_message` call reads back to the model. The JSONL keeps the encoder shape
 * (`{text:{content}}`, `{attachment:{url}}`, other types as a one-line summary: grok-bot-format.md
 * C9), but the model sent `{type, content, …}`. Both the live turn and the history rebuilt after a
 * restart give the model this same form, made from what the files hold: the JSONL input, and for a
 * delivered send its ledger entry (the only place a widget, a cursor agent or a secret request is
 * kept whole, and a text's `reply_to`).
 */
import { decodeJsonlSendInput, storedMessageSchema, type StoredMessage } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';

/** Types the JSONL keeps only as a summary: read from the ledger when it has the send. */
const LEDGER_ONLY = new Set(['widget', 'cursor-agent', 'secret-request']);

export function sendInputAsRead(jsonlInput: JsonObject, delivered?: unknown): JsonObject {
  const { toolCallId: _id, ...input } = jsonlInput;
  const parsed = delivered === undefined ? undefined : storedMessageSchema.safeParse(delivered);
  const ledger = parsed?.success ? parsed.data : undefined;
  const decoded = ledger && LEDGER_ONLY.has(ledger.type) ? ledger : decodeJsonlSendInput(input);
  if (!decoded) return input;
  const request = requestOf(decoded);
  if (decoded.type === 'text' && ledger?.type === 'text' && ledger.reply_to)
    request.reply_to = ledger.reply_to;
  return request;
}

/** The model-facing input of a stored message (the inverse of protocol's toStoredMessage). */
function requestOf(message: StoredMessage): JsonObject {
  switch (message.type) {
    case 'text': {
      const images = message.images?.map((image) => defined({ url: image.url, alt: image.alt }));
      return defined({
        type: 'text',
        content: message.content,
        images: images && images.length > 0 ? images : undefined,
        reply_to: message.reply_to,
      });
    }
    case 'attachment':
      return defined({ type: 'attachment', url: message.url, alt: message.alt });
    case 'widget':
      return { type: 'widget', widget: message.widget as unknown as JsonObject };
    case 'cursor-agent':
      return defined({ type: 'cursor-agent', bcId: message.bcId, title: message.title });
    case 'secret-request': {
      // The model names the target as `name` (an environment variable) or `connector` + `field`.
      const { label, description, target } = message.secretRequest;
      const where =
        target.kind === 'env' ? { name: target.name } : { connector: target.platform, field: target.field };
      return { type: 'secret-request', secret: defined({ label, description, ...where }) };
    }
    default:
      return { ...(message as unknown as JsonObject) };
  }
}

function defined(fields: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as JsonObject;
}

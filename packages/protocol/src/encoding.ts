/**
 * The three forms of a send_message and the conversions between them
 * (grok-bot-format.md §6, decisions C9 and C10):
 *
 *   validated model input ──toStoredMessage──▶ stored form (ledger, UI; typed)
 *   stored form ──toJsonlSendInput──▶ JSONL `tool_use.input` (protobuf-JSON shapes)
 *   JSONL input ──decodeJsonlSendInput──▶ stored form (best effort, for readers)
 *
 * The JSONL encoding keeps only text and attachment; the other types become
 * a one-line text summary, so decoding them gives that text back. The
 * summary strings are wire facts from the recovered encoder: keep them.
 */
import { validateSendMessage } from './errors.ts';
import { compact } from './compact.ts';
import type { SendMessageRequest } from './send-message-input.ts';
import {
  assertNever,
  storedMessageSchema,
  type StoredAttachment,
  type StoredImage,
  type StoredMessage,
  type StoredText,
  type Widget,
} from './stored.ts';

// ---------------------------------------------------------------------------
// model input → stored form

/** The stored (ledger) form of a validated request. The host adds size, media type and SHA-256 after ingest. */
export function toStoredMessage(request: SendMessageRequest): StoredMessage {
  switch (request.type) {
    case 'text':
      return compact({
        type: 'text' as const,
        content: request.content,
        images: request.images?.map((image) => compact({ url: image.url, alt: image.alt })),
        reply_to: request.reply_to,
      });
    case 'attachment':
      return compact({
        type: 'attachment' as const,
        url: request.url,
        file_name: fileNameFromUrl(request.url),
        alt: request.alt,
      });
    case 'widget':
      return { type: 'widget', widget: request.widget };
    case 'cursor-agent':
      return compact({ type: 'cursor-agent' as const, bcId: request.bcId, title: request.title });
    case 'secret-request':
      return {
        type: 'secret-request',
        secretRequest: compact({
          label: request.secret.label,
          description: request.secret.description,
          target: request.secret.target,
        }),
      };
    default:
      return assertNever(request, 'send_message request');
  }
}

/** The last path segment of a URL, percent-decoded; undefined when there is none. */
export function fileNameFromUrl(url: string): string | undefined {
  const path = url.replace(/[?#].*$/, '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  const last = path.split('/').pop() ?? '';
  if (last === '') return undefined;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

// ---------------------------------------------------------------------------
// stored form → JSONL tool_use.input

/** `send_message` input as written to the JSONL: protobuf `SendMessageArgs` read as JSON (C9). */
export type JsonlSendInput = { text: { content: string } } | { attachment: { url: string; alt?: string } };

export function toJsonlSendInput(message: StoredMessage): JsonlSendInput {
  switch (message.type) {
    case 'text':
      return { text: { content: textWithImages(message.content, message.images ?? []) } };
    case 'attachment':
      return { attachment: compact({ url: message.url, alt: message.alt }) };
    case 'widget':
    case 'cursor-agent':
    case 'secret-request':
      return { text: { content: summarizeSend(message) } };
    default:
      return assertNever(message, 'stored message');
  }
}

/** The default prompt of a widget summary when the prompt is empty (IX-69217861240). */
export const WIDGET_SUMMARY_DEFAULT_PROMPT = 'Question';

/**
 * One line of text standing for a send: what the JSONL keeps of a widget,
 * cursor-agent or secret-request (wire format, grok-bot-format.md §6). Text
 * and attachments summarise to their content and URL.
 */
export function summarizeSend(message: StoredMessage): string {
  switch (message.type) {
    case 'text':
      return message.content;
    case 'attachment':
      return message.url;
    case 'widget':
      return summarizeWidget(message.widget);
    case 'cursor-agent':
      return message.title !== undefined && message.title !== ''
        ? `Referenced Cursor cloud agent ${message.bcId} (${message.title})`
        : `Referenced Cursor cloud agent ${message.bcId}`;
    case 'secret-request':
      return `Requested a secret from the user securely: ${message.secretRequest.label}`;
    default:
      return assertNever(message, 'stored message');
  }
}

/** `<prompt> — <label> / <label>`, prompt defaulting to `Question`. */
export function summarizeWidget(widget: Widget): string {
  const prompt = widget.prompt.trim() === '' ? WIDGET_SUMMARY_DEFAULT_PROMPT : widget.prompt;
  const labels = widget.options.map((option) => option.label);
  return labels.length === 0 ? prompt : `${prompt} — ${labels.join(' / ')}`;
}

// ---------------------------------------------------------------------------
// markdown image lines

/** Text content as the JSONL carries it: content, a blank line, then one image line per image. */
export function textWithImages(content: string, images: readonly StoredImage[]): string {
  if (images.length === 0) return content;
  return `${content}\n\n${images.map((image) => markdownImage(image.url, image.alt)).join('\n')}`;
}

/**
 * `![alt](url)`. Brackets and backslashes in the alt are escaped; a line
 * break in the alt becomes a space (a markdown image is one line). A URL
 * with spaces, parentheses, angle brackets or backslashes is written in the
 * `<…>` form so it reads back unchanged.
 */
export function markdownImage(url: string, alt = ''): string {
  const escapedAlt = alt.replace(/[\r\n]+/g, ' ').replace(/[\\[\]]/g, (c) => `\\${c}`);
  const destination = /[\s()<>\\]/.test(url) ? `<${url.replace(/[\\<>]/g, (c) => `\\${c}`)}>` : url;
  return `![${escapedAlt}](${destination})`;
}

const IMAGE_LINE = /^!\[((?:\\.|[^\\[\]])*)\]\((?:<((?:\\.|[^\\<>\n])*)>|([^\s()<>\\]*))\)$/;

/** Reads one `![alt](url)` line, or undefined. */
export function parseMarkdownImage(line: string): StoredImage | undefined {
  const m = IMAGE_LINE.exec(line);
  if (m === null) return undefined;
  const [, rawAlt = '', angled, bare] = m;
  const url = angled !== undefined ? unescape(angled) : (bare ?? '');
  if (url === '') return undefined;
  const alt = unescape(rawAlt);
  return alt === '' ? { url } : { url, alt };
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, '$1');
}

/**
 * Splits image lines off the end of text content. Only a block of whole
 * image lines after a blank line counts, as the encoder writes it; anything
 * else stays text.
 */
export function splitTrailingImages(content: string): { content: string; images: StoredImage[] } {
  const lines = content.split('\n');
  const images: StoredImage[] = [];
  let first = lines.length;
  while (first > 0) {
    const image = parseMarkdownImage(lines[first - 1] ?? '');
    if (image === undefined) break;
    images.unshift(image);
    first -= 1;
  }
  if (images.length === 0) return { content, images };
  const before = lines.slice(0, first).join('\n') + '\n';
  if (first === 0 || !before.endsWith('\n\n')) return { content, images: [] };
  return { content: before.slice(0, -2), images };
}

// ---------------------------------------------------------------------------
// JSONL input → stored form (readers)

/** Keys the transcript writer may put beside the payload (C2); never part of the message. */
const ENVELOPE_KEYS = new Set(['toolCallId', 'tool_call_id', 'tool_use_id']);

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function withoutEnvelope(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([key]) => !ENVELOPE_KEYS.has(key)));
}

function decodeText(content: string): StoredText {
  const split = splitTrailingImages(content);
  return split.images.length > 0
    ? { type: 'text', content: split.content, images: split.images }
    : { type: 'text', content };
}

function decodeAttachment(url: string, alt: unknown): StoredAttachment {
  return compact({
    type: 'attachment' as const,
    url,
    file_name: fileNameFromUrl(url),
    alt: typeof alt === 'string' && alt !== '' ? alt : undefined,
  });
}

const IMAGE_FILE = /\.(png|jpe?g|gif|webp|svg|bmp|avif)$/i;

/**
 * The stored form of a JSONL send_message input, for readers (C9). Accepts
 * the encoder shapes `{text:{content}}` and `{attachment:{url, alt?}}`, flat
 * typed payloads (the stored form, or the model input), and the early
 * `{content, to?, attachments?:[{url}]}` shape. Undefined when the input is
 * none of these. Never throws.
 */
export function decodeJsonlSendInput(input: unknown): StoredMessage | undefined {
  const raw = record(input);
  if (raw === undefined) return undefined;
  const fields = withoutEnvelope(raw);

  const text = fields.text;
  if (typeof text === 'string') return decodeText(text);
  const textContent = record(text)?.content;
  if (typeof textContent === 'string') return decodeText(textContent);

  const attachment = record(fields.attachment);
  if (attachment !== undefined && typeof attachment.url === 'string' && attachment.url !== '') {
    return decodeAttachment(attachment.url, attachment.alt);
  }

  if (typeof fields.type === 'string') {
    const stored = storedMessageSchema.safeParse(fields);
    if (stored.success) return stored.data;
    const modelInput = validateSendMessage(fields);
    if (modelInput.ok) return toStoredMessage(modelInput.value);
  }

  return decodeEarlyShape(fields);
}

/** `{content, to:"dm", attachments:[{url}]}` from an early fixture: image URLs ride as images, other files as links. */
function decodeEarlyShape(fields: Record<string, unknown>): StoredMessage | undefined {
  const content = typeof fields.content === 'string' ? fields.content : undefined;
  const urls = (Array.isArray(fields.attachments) ? fields.attachments : [])
    .map((item) => (typeof item === 'string' ? item : record(item)?.url))
    .filter((url): url is string => typeof url === 'string' && url !== '');
  if (content === undefined && urls.length === 0) return undefined;
  if (content === undefined && urls.length === 1 && urls[0] !== undefined)
    return decodeAttachment(urls[0], undefined);
  const images = urls.filter((url) => IMAGE_FILE.test(url.replace(/[?#].*$/, '')));
  const files = urls.filter((url) => !images.includes(url));
  const links = files.map((url) => `[${fileNameFromUrl(url) ?? url}](${url})`);
  const body = [content ?? '', ...links].filter((part) => part !== '').join('\n\n');
  return images.length > 0
    ? { type: 'text', content: body, images: images.map((url) => ({ url })) }
    : { type: 'text', content: body };
}

// ---------------------------------------------------------------------------
// results

/** A send_message `tool_result.result` as the box writes it (C10: timestamp as an epoch-ms string). */
export type SendResult = { success: { timestamp: string; messageId: string } } | { error: { error: string } };

export function sendResultSuccess(
  messageId: string,
  timestampMs: number,
): { success: { timestamp: string; messageId: string } } {
  if (!Number.isSafeInteger(timestampMs))
    throw new RangeError(`timestampMs must be integer epoch ms, got ${timestampMs}`);
  return { success: { timestamp: String(timestampMs), messageId } };
}

export function sendResultError(text: string): { error: { error: string } } {
  return { error: { error: text } };
}

/** What the model reads after a delivered send (grok-bot-format.md §6). */
export function sendSuccessText(messageId: string): string {
  return `Message sent to user. (id: ${messageId})`;
}

export type DecodedSendResult =
  { ok: true; messageId: string | undefined; timestampMs: number | undefined } | { ok: false; error: string };

/**
 * Reads a send_message result from any host (C10): the timestamp may be an
 * epoch-ms string, a number or an ISO string. Undefined when the value is
 * not a send result.
 */
export function decodeSendResult(result: unknown): DecodedSendResult | undefined {
  const raw = record(result);
  if (raw === undefined) return undefined;
  const success = record(raw.success);
  if (success !== undefined) {
    return {
      ok: true,
      messageId:
        typeof success.messageId === 'string' && success.messageId !== '' ? success.messageId : undefined,
      timestampMs: decodeTimestamp(success.timestamp),
    };
  }
  if ('error' in raw) {
    const error = record(raw.error)?.error ?? raw.error;
    return { ok: false, error: typeof error === 'string' ? error : JSON.stringify(error) };
  }
  const failure = record(raw.failure);
  if (failure !== undefined) return { ok: false, error: JSON.stringify(failure) };
  return undefined;
}

export function decodeTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

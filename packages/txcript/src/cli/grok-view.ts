/**
 * How a Grok Bot session reads to a person (grok-bot-format.md C1, C5):
 * `send_message` is the reply the user saw, plain assistant text is private
 * thinking, and hidden prompts and wakes are marked as such. Common keeps all
 * of it unchanged; only the view differs.
 */
import type { JsonValue } from '../model/common.ts';
import { isJsonObject as isObject } from '../model/json.ts';

/** A piece of a visible reply: words the user read, or a card (attachment, widget, …) described in brackets. */
export interface ReplyPart {
  text: string;
  card?: boolean;
}

function str(v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function imageParts(images: JsonValue | undefined): ReplyPart[] {
  if (!Array.isArray(images)) return [];
  return images.flatMap((img) => {
    if (!isObject(img)) return [];
    const url = str(img.url);
    if (url === undefined) return [];
    const alt = str(img.alt);
    return [{ text: `[image: ${url}${alt === undefined ? '' : ` "${alt}"`}]`, card: true }];
  });
}

function attachmentPart(url: string, alt: string | undefined): ReplyPart {
  return { text: `[attachment: ${url}${alt === undefined ? '' : ` "${alt}"`}]`, card: true };
}

function widgetParts(widget: JsonValue | undefined): ReplyPart[] {
  if (!isObject(widget)) return [{ text: '[widget]', card: true }];
  const prompt = str(widget.prompt) ?? 'Question';
  const options = Array.isArray(widget.options) ? widget.options : [];
  const labels = options.map((o) =>
    isObject(o) ? (str(o.label) ?? str(o.value) ?? '?') : JSON.stringify(o),
  );
  const multi = widget.multiSelect === true ? ' (pick any)' : '';
  return [
    { text: prompt },
    { text: `[choices${multi}: ${labels.map((l) => `[${l}]`).join(' ')}]`, card: true },
  ];
}

function attachmentParts(list: JsonValue | undefined): ReplyPart[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((a) =>
    isObject(a) && typeof a.url === 'string' ? [attachmentPart(a.url, str(a.alt))] : [],
  );
}

function secretPart(input: { [key: string]: JsonValue }): ReplyPart {
  // The model-facing input says `secret`; the stored form says `secretRequest`.
  const secret = isObject(input.secret)
    ? input.secret
    : isObject(input.secretRequest)
      ? input.secretRequest
      : {};
  return { text: `[secret request: ${str(secret.label) ?? '?'}]`, card: true };
}

/** Keys a send of a type this view does not model may hold a one-line summary in. */
const SUMMARY_KEYS = ['summary', 'title', 'label', 'name', 'connector', 'subject', 'prompt'] as const;

/** A card for a stored type the view does not model (connector, auto-review-approval, …): its type and gist. */
function otherTypePart(type: string, input: { [key: string]: JsonValue }): ReplyPart {
  const { type: _type, toolCallId: _id, ...rest } = input;
  let gist: string | undefined;
  const look = (o: { [key: string]: JsonValue }): string | undefined =>
    SUMMARY_KEYS.map((k) => str(o[k])).find((v) => v !== undefined && v !== '');
  gist = look(rest);
  for (const v of Object.values(rest)) {
    if (gist !== undefined) break;
    if (isObject(v)) gist = look(v);
  }
  return { text: `[${type}${gist === undefined ? '' : `: ${gist}`}]`, card: true };
}

/**
 * The reply a `send_message` input showed the user: every card it holds.
 * Accepts the encoder shapes written to JSONL (`{text:{content, images?}}`,
 * `{attachment:{url, alt?}}`), flat typed payloads (`{type, content, images,
 * …}`) and the early flat shape with `attachments: [{url}]` beside the text
 * (C9), in any combination; a stored type the view does not model still
 * shows as a card naming it.
 */
export function sendMessageReply(input: JsonValue): ReplyPart[] {
  if (typeof input === 'string') return [{ text: input }];
  if (!isObject(input)) return [{ text: `[send_message: ${JSON.stringify(input)}]`, card: true }];
  const parts: ReplyPart[] = [];
  const type = str(input.type);
  if (isObject(input.text)) {
    const content = str(input.text.content);
    if (content !== undefined) parts.push({ text: content });
    parts.push(...imageParts(input.text.images), ...attachmentParts(input.text.attachments));
  } else if (typeof input.text === 'string') parts.push({ text: input.text });
  const content = str(input.content);
  if (content !== undefined) parts.push({ text: content });
  parts.push(...imageParts(input.images));
  if (isObject(input.attachment) && typeof input.attachment.url === 'string') {
    parts.push(attachmentPart(input.attachment.url, str(input.attachment.alt)));
  }
  if (type === 'attachment' && typeof input.url === 'string') {
    const name = str(input.file_name);
    parts.push(attachmentPart(input.url, str(input.alt) ?? name));
  }
  parts.push(...attachmentParts(input.attachments));
  if (type === 'widget' || (type === undefined && isObject(input.widget)))
    parts.push(...widgetParts(input.widget));
  else if (type === 'cursor-agent') {
    const title = str(input.title);
    const label = `${str(input.bcId) ?? '?'}${title === undefined ? '' : ` (${title})`}`;
    parts.push({ text: `[cursor agent: ${label}]`, card: true });
  } else if (type === 'secret-request' || (type === undefined && isObject(input.secret)))
    parts.push(secretPart(input));
  else if (type !== undefined && type !== 'text' && type !== 'attachment')
    parts.push(otherTypePart(type, input));
  if (parts.length === 0) {
    const { toolCallId: _id, ...rest } = input;
    parts.push({ text: `[send_message: ${JSON.stringify(rest)}]`, card: true });
  }
  return parts;
}

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

/**
 * The reply a `send_message` input showed the user. Accepts the encoder
 * shapes written to JSONL (`{text:{content}}`, `{attachment:{url, alt?}}`)
 * and flat typed payloads (`{type, content, images, …}`) (C9).
 */
export function sendMessageReply(input: JsonValue): ReplyPart[] {
  if (typeof input === 'string') return [{ text: input }];
  if (!isObject(input)) return [{ text: `[send_message: ${JSON.stringify(input)}]`, card: true }];
  if (isObject(input.text) && typeof input.text.content === 'string') {
    return [{ text: input.text.content }, ...imageParts(input.text.images)];
  }
  if (isObject(input.attachment) && typeof input.attachment.url === 'string') {
    return [attachmentPart(input.attachment.url, str(input.attachment.alt))];
  }
  const type = str(input.type);
  if (type === 'attachment') return [attachmentPart(str(input.url) ?? '?', str(input.alt))];
  if (type === 'widget') return widgetParts(input.widget);
  if (type === 'cursor-agent') {
    const title = str(input.title);
    const label = `${str(input.bcId) ?? '?'}${title === undefined ? '' : ` (${title})`}`;
    return [{ text: `[cursor agent: ${label}]`, card: true }];
  }
  if (type === 'secret-request') {
    // The model-facing input says `secret`; the stored form says `secretRequest`.
    const secret = isObject(input.secret)
      ? input.secret
      : isObject(input.secretRequest)
        ? input.secretRequest
        : {};
    return [{ text: `[secret request: ${str(secret.label) ?? '?'}]`, card: true }];
  }
  const parts: ReplyPart[] = [];
  const content = str(input.content);
  if (content !== undefined) parts.push({ text: content });
  parts.push(...imageParts(input.images));
  // An early flat shape carries `attachments: [{url}]` beside the text.
  if (Array.isArray(input.attachments)) {
    for (const a of input.attachments) {
      if (isObject(a) && typeof a.url === 'string') parts.push(attachmentPart(a.url, str(a.alt)));
    }
  }
  if (parts.length === 0) {
    const { toolCallId: _id, ...rest } = input;
    parts.push({ text: `[send_message: ${JSON.stringify(rest)}]`, card: true });
  }
  return parts;
}

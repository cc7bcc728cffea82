/**
 * How a Grok Bot session reads to a person (grok-bot-format.md C1, C5):
 * `send_message` is the reply the user saw, plain assistant text is private
 * thinking, and hidden prompts and wakes are marked as such. Common keeps all
 * of it unchanged; only the view differs.
 */
import type { JsonObject, JsonValue } from '../model/common.ts';

export type TextSegment = { hidden: false; text: string } | { hidden: true; kind: string; text: string };

/** Tags the host injects into user turns; their content was never typed by the user. */
const INJECTED_TAGS = ['system_reminder', 'agent_profile_update', 'instructions_update'] as const;

const HIDDEN_MARKER = /\[(?:SAND_HIDDEN_PROMPT|GROK_BOT_HIDDEN_PROMPT)[^\]\n]*\]/;

/** Wakes whose whole text is context, not the user speaking (§4 "Meta wakes"). */
const WHOLE_WAKES: ReadonlyArray<[RegExp, string]> = [
  [/^\[routine\]/i, 'routine'],
  [/^\[agent\]/i, 'agent'],
  [/^\[event\]/i, 'event'],
  [/^\[first run\]/i, 'first run'],
  [/^\[A background task just completed\]/i, 'background task'],
  [/^\[Group chat:[^\]\n]*\]/i, 'group chat'],
];

/** Wakes that only prefix a real user message: the bracket is hidden, the rest is the user's. */
const PREFIX_WAKES: ReadonlyArray<[RegExp, string]> = [
  [/^\[Answering your question [^:\]\n]*: ".*?"\]/s, 'answering a question'],
  [/^\[Answering your question [^\]\n]*\]/, 'answering a question'],
  [/^\[inbound\]/i, 'inbound'],
];

function wakeKind(text: string): string | undefined {
  const t = text.trimStart();
  for (const [re, kind] of [...WHOLE_WAKES, ...PREFIX_WAKES]) if (re.test(t)) return kind;
  if (t.startsWith('<<SAND_AGENT_PROFILE_UPDATE')) return 'profile update';
  const bracket = /^\[([^\]\n]{1,40})\]/.exec(t);
  return bracket?.[1];
}

function splitTags(text: string): TextSegment[] {
  const out: TextSegment[] = [];
  const open = new RegExp(`<(${INJECTED_TAGS.join('|')})>`);
  let rest = text;
  for (;;) {
    const m = open.exec(rest);
    if (m === null) break;
    const tag = m[1]!;
    const close = `</${tag}>`;
    const end = rest.indexOf(close, m.index);
    const stop = end < 0 ? rest.length : end + close.length;
    out.push({ hidden: false, text: rest.slice(0, m.index) });
    out.push({ hidden: true, kind: tag, text: rest.slice(m.index, stop) });
    rest = rest.slice(stop);
  }
  out.push({ hidden: false, text: rest });
  return out;
}

function splitWakes(text: string): TextSegment[] {
  const lead = text.length - text.trimStart().length;
  const body = text.slice(lead);
  for (const [re, kind] of WHOLE_WAKES) if (re.test(body)) return [{ hidden: true, kind, text: body }];
  for (const [re, kind] of PREFIX_WAKES) {
    const m = re.exec(body);
    if (m !== null) return [{ hidden: true, kind, text: m[0] }, ...splitTags(body.slice(m[0].length))];
  }
  return splitTags(text);
}

/**
 * A user text split into what the user typed and what the host injected.
 * A hidden-prompt marker hides everything from it to the end (VR-late: "a
 * marker later in the text cuts off what follows"). Blank segments are dropped.
 */
export function splitHiddenText(text: string): TextSegment[] {
  const marker = HIDDEN_MARKER.exec(text);
  const segments =
    marker === null
      ? splitWakes(text)
      : [
          ...splitWakes(text.slice(0, marker.index)),
          {
            hidden: true as const,
            kind: wakeKind(text.slice(marker.index + marker[0].length)) ?? 'hidden prompt',
            text: text.slice(marker.index),
          },
        ];
  // Blank pieces go; a visible piece loses the whitespace that only separated it from a hidden one.
  const kept = segments.filter((seg) => seg.text.trim() !== '');
  return kept.map((seg, i) => {
    if (seg.hidden) return seg;
    let text = seg.text;
    if (kept[i - 1]?.hidden === true) text = text.trimStart();
    if (kept[i + 1]?.hidden === true) text = text.trimEnd();
    return { hidden: false, text: text.replace(/\s+$/, '') };
  });
}

/** A piece of a visible reply: words the user read, or a card (attachment, widget, …) described in brackets. */
export interface ReplyPart {
  text: string;
  card?: boolean;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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

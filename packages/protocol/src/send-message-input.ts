/**
 * The model-facing input of send_message: one flat object whose `type` picks
 * the bubble (seed 000 "The parameter schema"; grok-bot-format.md §6).
 *
 * Two layers:
 * - the Zod object below checks shapes field by field (and is what the
 *   provider sees as JSON Schema);
 * - `checkSendMessageRules` (superRefine) checks what depends on `type`:
 *   required fields, fields that belong to another type, URL schemes and the
 *   secret target. Its issue messages are complete sentences for the model.
 *
 * After validation, `toSendMessageRequest` narrows the flat object to a union
 * typed by `type`, so later code never re-checks optionals.
 */
import { z } from 'zod';
import { SEND_MESSAGE_TYPES, assertNever, type SecretTarget, type SendMessageType } from './stored.ts';
import { compact } from './compact.ts';
import { listOr, quote } from './wording.ts';

/** Length limits: 120 for labels, 400 for descriptions (grok-bot-format.md §6, IX-69171645680). */
export const LABEL_MAX_CHARS = 120;
export const DESCRIPTION_MAX_CHARS = 400;
/** A widget offers 1–6 options (grok-bot-format.md §6). */
export const WIDGET_MIN_OPTIONS = 1;
export const WIDGET_MAX_OPTIONS = 6;
/** The personal secret target is an environment variable of the agent's tools (IX-69171645680). */
export const ENV_NAME_PATTERN = /^[A-Z_][A-Z0-9_]*$/;
/** Schemes an attachment or image URL may use (seed 000: "file:// for local files or https:// ..."). */
export const URL_SCHEMES = ['file://', 'https://'] as const;
/** A message address such as `t3u` or `tbs1`, as the `[t3u]` tag shows it (grok-bot-format.md §4, §6). */
export const ADDRESS_PATTERN = /^t[0-9a-z]+$/;
export const WIDGET_OPTION_STYLES = ['default', 'primary', 'danger'] as const;

const TYPE_DESCRIPTION =
  'Which bubble to show. text: a chat message in Markdown (pictures go in `images`). ' +
  'attachment: one real file or standalone media, by `url`. ' +
  'widget: a question with clickable options; it ends your turn. ' +
  'cursor-agent: a card that opens a Cursor cloud agent, by `bcId`. ' +
  'secret-request: a masked input asking the user for a credential (never ask for one in chat).';

export const imageInputSchema = z.strictObject({
  url: z.string().trim().min(1).describe('file:///absolute/path or https:// URL of the image.'),
  alt: z
    .string()
    .trim()
    .optional()
    .describe('Optional short description, shown on hover and as the caption.'),
});

export const widgetOptionInputSchema = z.strictObject({
  label: z
    .string()
    .trim()
    .min(1)
    .max(LABEL_MAX_CHARS)
    .describe(`Text on the option, at most ${LABEL_MAX_CHARS} characters.`),
  value: z
    .string()
    .trim()
    .optional()
    .describe('What you receive when this option is picked; defaults to the label.'),
  description: z
    .string()
    .trim()
    .max(DESCRIPTION_MAX_CHARS)
    .optional()
    .describe(`Optional detail under the label, at most ${DESCRIPTION_MAX_CHARS} characters.`),
  style: z
    .enum(WIDGET_OPTION_STYLES)
    .optional()
    .describe('primary for the suggested choice, danger for a destructive one.'),
});

export const widgetInputSchema = z.strictObject({
  prompt: z.string().trim().min(1).describe('The question.'),
  helpText: z
    .string()
    .trim()
    .max(DESCRIPTION_MAX_CHARS)
    .optional()
    .describe(`Optional hint under the question, at most ${DESCRIPTION_MAX_CHARS} characters.`),
  options: z
    .array(widgetOptionInputSchema)
    .min(WIDGET_MIN_OPTIONS)
    .max(WIDGET_MAX_OPTIONS)
    .describe(`${WIDGET_MIN_OPTIONS} to ${WIDGET_MAX_OPTIONS} choices.`),
  allowCustom: z.boolean().optional().describe('Also let the user type an answer of their own.'),
  multiSelect: z
    .boolean()
    .optional()
    .describe('Let the user pick several; the picks come back one per line.'),
});

export const secretInputSchema = z.strictObject({
  label: z
    .string()
    .trim()
    .min(1)
    .max(LABEL_MAX_CHARS)
    .describe(`What is asked for, e.g. "GitHub token"; at most ${LABEL_MAX_CHARS} characters.`),
  description: z
    .string()
    .trim()
    .max(DESCRIPTION_MAX_CHARS)
    .optional()
    .describe(`Optional: why it is needed, at most ${DESCRIPTION_MAX_CHARS} characters.`),
  name: z
    .string()
    .trim()
    .regex(ENV_NAME_PATTERN)
    .optional()
    .describe(
      'Environment variable that receives the secret, e.g. GITHUB_TOKEN. Use this or connector + field.',
    ),
  connector: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('Connector whose credential this is. Needs `field`.'),
  field: z.string().trim().min(1).optional().describe('The credential field of that connector.'),
});

const sendMessageObjectSchema = z.strictObject({
  type: z.enum(SEND_MESSAGE_TYPES).describe(TYPE_DESCRIPTION),
  content: z.string().trim().optional().describe('type text: the message, in Markdown.'),
  images: z
    .array(imageInputSchema)
    .optional()
    .describe('type text: images shown as a grid with the message.'),
  reply_to: z
    .string()
    .trim()
    .optional()
    .describe('type text, optional: address of the message you answer, e.g. t3u (the tag without brackets).'),
  url: z
    .string()
    .trim()
    .optional()
    .describe('type attachment: file:///absolute/path for a file you made, or an https:// link.'),
  alt: z.string().trim().optional().describe('type attachment, optional: a short caption for the file.'),
  widget: widgetInputSchema.optional().describe('type widget: the question and its options.'),
  bcId: z.string().trim().optional().describe('type cursor-agent: id of the Cursor cloud agent.'),
  title: z.string().trim().optional().describe('type cursor-agent, optional: title shown on the card.'),
  secret: secretInputSchema
    .optional()
    .describe('type secret-request: what to ask for and where the secret goes.'),
});

/** The flat, shape-checked input (strings trimmed). Cross-field rules are not reflected in this type. */
export type SendMessageInput = z.output<typeof sendMessageObjectSchema>;
export type ImageInput = z.output<typeof imageInputSchema>;
export type WidgetInput = z.output<typeof widgetInputSchema>;
export type SecretInput = z.output<typeof secretInputSchema>;
/** Every input key except `type`: each belongs to exactly one type. */
export type SendMessageField = Exclude<keyof SendMessageInput, 'type'>;

/**
 * The type each field belongs to. Typed as a total record, so a field added to
 * the schema does not compile until it is given an owner here.
 */
export const FIELD_OWNER = {
  content: 'text',
  images: 'text',
  reply_to: 'text',
  url: 'attachment',
  alt: 'attachment',
  widget: 'widget',
  bcId: 'cursor-agent',
  title: 'cursor-agent',
  secret: 'secret-request',
} as const satisfies Record<SendMessageField, SendMessageType>;

export const SEND_MESSAGE_FIELDS = Object.keys(FIELD_OWNER) as SendMessageField[];

/** The fields of one type, in schema order. */
export function fieldsOf(type: SendMessageType): SendMessageField[] {
  return SEND_MESSAGE_FIELDS.filter((field) => FIELD_OWNER[field] === type);
}

/** True when a field carries something: empty strings and lists count as absent, as a model often fills every key. */
export function isFieldSet(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

type Issue = { path: PropertyKey[]; message: string };

/** Cross-field rules; each returns complete, model-readable sentences. */
export function sendMessageRuleIssues(input: SendMessageInput): Issue[] {
  const issues: Issue[] = [];
  for (const field of SEND_MESSAGE_FIELDS) {
    const owner = FIELD_OWNER[field];
    if (owner !== input.type && isFieldSet(input[field])) {
      issues.push({
        path: [field],
        message:
          `\`${field}\` belongs to type ${owner}, not ${input.type}. Remove it, ` +
          `or send it in a separate call with type ${owner}.`,
      });
    }
  }
  switch (input.type) {
    case 'text':
      issues.push(...textIssues(input));
      break;
    case 'attachment':
      issues.push(...attachmentIssues(input));
      break;
    case 'widget':
      issues.push(...widgetIssues(input));
      break;
    case 'cursor-agent':
      if (!isFieldSet(input.bcId)) {
        issues.push({
          path: ['bcId'],
          message: `type cursor-agent needs \`bcId\`, the id of the Cursor cloud agent the card opens; you sent ${sentOrEmpty(input.bcId)}.`,
        });
      }
      break;
    case 'secret-request':
      issues.push(...secretIssues(input));
      break;
    default:
      assertNever(input.type, 'send_message type');
  }
  return issues;
}

function sentOrEmpty(value: string | undefined): string {
  return value === undefined ? 'none' : 'an empty string';
}

function textIssues(input: SendMessageInput): Issue[] {
  const issues: Issue[] = [];
  if (!isFieldSet(input.content) && !isFieldSet(input.images)) {
    const sent = input.content === undefined ? 'neither' : 'an empty `content` and no images';
    issues.push({
      path: ['content'],
      message: `type text needs \`content\` (the words to show) or \`images\`; you sent ${sent}.`,
    });
  }
  input.images?.forEach((image, index) => {
    const problem = urlProblem(image.url);
    if (problem !== undefined) {
      issues.push({
        path: ['images', index, 'url'],
        message: `\`images[${index}].url\` needs a URL ${problem}`,
      });
    }
  });
  if (isFieldSet(input.reply_to) && input.reply_to !== undefined && !ADDRESS_PATTERN.test(input.reply_to)) {
    const bare = /^\[(t[0-9a-z]+)\]$/.exec(input.reply_to)?.[1];
    issues.push({
      path: ['reply_to'],
      message:
        `\`reply_to\` must be a message address such as t3u; you sent ${quote(input.reply_to)}. ` +
        (bare !== undefined
          ? `Drop the brackets: ${quote(bare)}.`
          : 'Copy the tag from the start of the user message, without its brackets.'),
    });
  }
  return issues;
}

function attachmentIssues(input: SendMessageInput): Issue[] {
  if (!isFieldSet(input.url)) {
    return [
      {
        path: ['url'],
        message:
          `type attachment needs \`url\` with a file:// or https:// scheme; you sent ${sentOrEmpty(input.url)}. ` +
          'Use file:///absolute/path for a file you made, or an https:// link.',
      },
    ];
  }
  const problem = input.url === undefined ? undefined : urlProblem(input.url);
  return problem === undefined
    ? []
    : [{ path: ['url'], message: `type attachment needs \`url\` ${problem}` }];
}

/**
 * What is wrong with an attachment or image URL, as the end of a sentence
 * ("... needs `url` <problem>"), or undefined when it is fine.
 */
export function urlProblem(url: string): string | undefined {
  if (/\s/.test(url)) {
    return `without spaces or line breaks; you sent ${quote(url)}. Write a space in a path as %20.`;
  }
  const scheme = URL_SCHEMES.find((s) => url.toLowerCase().startsWith(s));
  if (scheme === undefined) {
    return `with a file:// or https:// scheme; you sent ${quote(url)}. ${urlFix(url)}`;
  }
  if (scheme === 'file://' && !url.slice(scheme.length).startsWith('/')) {
    return (
      `with an absolute path after file://; you sent ${quote(url)}. ` +
      'Write three slashes before the path, as in file:///home/box/report.pdf.'
    );
  }
  if (url.length === scheme.length) return `with a file or host after ${scheme}; you sent ${quote(url)}.`;
  return undefined;
}

function urlFix(url: string): string {
  if (url.startsWith('/')) return `For a file you made, use ${quote(`file://${url}`)}.`;
  if (/^http:\/\//i.test(url)) return `Plain http is not accepted; use ${quote(`https://${url.slice(7)}`)}.`;
  return 'Use file:///absolute/path for a file you made, or an https:// link.';
}

function widgetIssues(input: SendMessageInput): Issue[] {
  if (input.widget === undefined) {
    return [
      {
        path: ['widget'],
        message:
          `type widget needs \`widget\` with a \`prompt\` and ${WIDGET_MIN_OPTIONS} to ${WIDGET_MAX_OPTIONS} \`options\`; you sent none. ` +
          'Example: {"type":"widget","widget":{"prompt":"Deploy now?","options":[{"label":"Yes"},{"label":"Not yet"}]}}',
      },
    ];
  }
  // Two options with one label would come back as the same answer.
  const issues: Issue[] = [];
  const seen = new Map<string, { index: number; label: string }>();
  input.widget.options.forEach((option, index) => {
    const key = option.label.toLowerCase();
    const first = seen.get(key);
    if (first === undefined) seen.set(key, { index, label: option.label });
    else {
      issues.push({
        path: ['widget', 'options', index, 'label'],
        message:
          `\`widget.options[${index}].label\` ${quote(option.label)} repeats the label of option ${first.index} ` +
          `(${quote(first.label)}); give each option its own label.`,
      });
    }
  });
  return issues;
}

function secretIssues(input: SendMessageInput): Issue[] {
  const secret = input.secret;
  if (secret === undefined) {
    return [
      {
        path: ['secret'],
        message:
          'type secret-request needs `secret` with a `label` and a target: `name` (an environment variable such as GITHUB_TOKEN) ' +
          'or `connector` plus `field`; you sent none.',
      },
    ];
  }
  const hasEnv = isFieldSet(secret.name);
  const hasConnector = isFieldSet(secret.connector) || isFieldSet(secret.field);
  if (hasEnv && hasConnector) {
    return [
      {
        path: ['secret'],
        message:
          '`secret` names two targets, an environment variable (`name`) and a connector (`connector`/`field`); keep only one.',
      },
    ];
  }
  if (!hasEnv && !hasConnector) {
    return [
      {
        path: ['secret'],
        message:
          '`secret` needs a target: `name` for an environment variable of your tools (such as GITHUB_TOKEN), ' +
          'or `connector` and `field` for a connector credential; you sent neither.',
      },
    ];
  }
  if (hasConnector && !isFieldSet(secret.field)) {
    return [
      {
        path: ['secret', 'field'],
        message: `\`secret.field\` is missing: say which credential field of connector ${quote(secret.connector ?? '')} the secret fills.`,
      },
    ];
  }
  if (hasConnector && !isFieldSet(secret.connector)) {
    return [
      {
        path: ['secret', 'connector'],
        message: `\`secret.connector\` is missing: say which connector the field ${quote(secret.field ?? '')} belongs to.`,
      },
    ];
  }
  return [];
}

/**
 * The full contract: shapes plus cross-field rules. Its JSON Schema (input
 * side) is what providers see; the rules run only on input whose shapes are
 * right, so a call with shape problems is answered in two rounds at most.
 */
export const sendMessageInputSchema = sendMessageObjectSchema.superRefine((input, ctx) => {
  for (const issue of sendMessageRuleIssues(input)) {
    ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, input });
  }
});

export type SendMessageRequest =
  | {
      type: 'text';
      content: string;
      images?: { url: string; alt?: string }[];
      reply_to?: string;
    }
  | { type: 'attachment'; url: string; alt?: string }
  | { type: 'widget'; widget: WidgetInput }
  | { type: 'cursor-agent'; bcId: string; title?: string }
  | {
      type: 'secret-request';
      secret: { label: string; description?: string; target: SecretTarget };
    };

/** Empty optional strings are treated as absent. */
function optional(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined || value === '') {
    throw new Error(`send_message input reached encoding without \`${field}\`: validate it first`);
  }
  return value;
}

/**
 * Narrows a validated input to the union typed by `type`, keeping only the
 * fields of that type. Throws on input that did not pass validation (a bug in
 * the caller, not a model error).
 */
export function toSendMessageRequest(input: SendMessageInput): SendMessageRequest {
  switch (input.type) {
    case 'text': {
      const images = input.images?.map((image) => compact({ url: image.url, alt: optional(image.alt) }));
      return compact({
        type: 'text' as const,
        content: input.content ?? '',
        images: images !== undefined && images.length > 0 ? images : undefined,
        reply_to: optional(input.reply_to),
      });
    }
    case 'attachment':
      return compact({
        type: 'attachment' as const,
        url: required(input.url, 'url'),
        alt: optional(input.alt),
      });
    case 'widget': {
      const widget = required(input.widget, 'widget');
      return {
        type: 'widget',
        widget: compact({
          prompt: widget.prompt,
          helpText: optional(widget.helpText),
          options: widget.options.map((option) =>
            compact({
              label: option.label,
              value: optional(option.value),
              description: optional(option.description),
              style: option.style,
            }),
          ),
          allowCustom: widget.allowCustom,
          multiSelect: widget.multiSelect,
        }),
      };
    }
    case 'cursor-agent':
      return compact({
        type: 'cursor-agent' as const,
        bcId: required(input.bcId, 'bcId'),
        title: optional(input.title),
      });
    case 'secret-request': {
      const secret = required(input.secret, 'secret');
      const name = optional(secret.name);
      const target: SecretTarget =
        name !== undefined
          ? { kind: 'env', name }
          : {
              kind: 'channel-credential',
              platform: required(optional(secret.connector), 'secret.connector'),
              field: required(optional(secret.field), 'secret.field'),
            };
      return {
        type: 'secret-request',
        secret: compact({ label: secret.label, description: optional(secret.description), target }),
      };
    }
    default:
      return assertNever(input.type, 'send_message type');
  }
}

/** `text, attachment, widget, cursor-agent or secret-request` */
export const SEND_MESSAGE_TYPE_LIST = listOr([...SEND_MESSAGE_TYPES]);

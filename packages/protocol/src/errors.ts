/**
 * Validation of a send_message call, answered in words the model can act on.
 *
 * The result text goes back to the model as the tool result (seed 000,
 * "Make validation failures recoverable"): never thrown, one line per
 * problem, each naming the field path, what was received (short, quoted,
 * truncated) and the fix.
 */
import type { z } from 'zod';
import { SEND_MESSAGE_TYPES, assertNever, type SendMessageType } from './stored.ts';
import { SEND_MESSAGE_TOOL_NAME } from './tool.ts';
import {
  DESCRIPTION_MAX_CHARS,
  LABEL_MAX_CHARS,
  SEND_MESSAGE_TYPE_LIST,
  WIDGET_MAX_OPTIONS,
  WIDGET_MIN_OPTIONS,
  imageInputSchema,
  secretInputSchema,
  sendMessageInputSchema,
  toSendMessageRequest,
  widgetInputSchema,
  widgetOptionInputSchema,
  SEND_MESSAGE_FIELDS,
  type SendMessageRequest,
} from './send-message-input.ts';
import { count, describeValue, formatPath, listOr, pathPattern, quote } from './wording.ts';

export type SendMessageValidation =
  { ok: true; value: SendMessageRequest } | { ok: false; message: string; problems: string[] };

/** Checks one send_message call. On failure, `message` is the whole tool result for the model. */
export function validateSendMessage(
  input: unknown,
  options: { toolName?: string } = {},
): SendMessageValidation {
  const toolName = options.toolName ?? SEND_MESSAGE_TOOL_NAME;
  const parsed = sendMessageInputSchema.safeParse(input, { reportInput: true });
  if (parsed.success) return { ok: true, value: toSendMessageRequest(parsed.data) };
  const problems = [
    ...new Set(parsed.error.issues.flatMap((issue) => describeIssue(issue, input, toolName))),
  ];
  return { ok: false, message: rejectionText(problems, toolName), problems };
}

/** The tool result for a rejected call: a heading, then one line per problem. */
export function rejectionText(
  problems: readonly string[],
  toolName: string = SEND_MESSAGE_TOOL_NAME,
): string {
  const heading =
    problems.length === 1
      ? `Not delivered: this ${toolName} call has a problem. Fix it and call ${toolName} again.`
      : `Not delivered: this ${toolName} call has ${problems.length} problems. Fix them and call ${toolName} again.`;
  return [heading, ...problems.map((line) => `- ${line}`)].join('\n');
}

/** Field names a model reaches for, and where that content goes instead. */
const KEY_ALIASES: Record<string, string> = {
  text: 'Put the words in `content`.',
  message: 'Put the words in `content`.',
  body: 'Put the words in `content`.',
  markdown: 'Put the words in `content`.',
  file: 'Send a file as type attachment with its URL in `url`.',
  path: 'Send a file as type attachment with its URL in `url` (file:///absolute/path).',
  file_path: 'Send a file as type attachment with its URL in `url` (file:///absolute/path).',
  attachments: 'Send each file as its own send_message call with type attachment and `url`.',
  image: 'Put pictures in `images` as [{"url":"..."}] on a text message.',
  caption: 'A caption for an attachment goes in `alt`.',
  question: 'Ask with type widget: the question goes in `widget.prompt`.',
  prompt: 'Ask with type widget: the question goes in `widget.prompt`.',
  options: 'Choices go in `widget.options` with type widget.',
  choices: 'Choices go in `widget.options` with type widget.',
  replyTo: 'The field is spelled `reply_to`.',
  reply: 'The field is spelled `reply_to`.',
  label: 'For a secret-request the label goes in `secret.label`.',
  env: 'The environment variable goes in `secret.name`.',
};

/** `type` values a model may try, and the type it means. */
const TYPE_ALIASES: Record<string, SendMessageType> = {
  message: 'text',
  markdown: 'text',
  image: 'text',
  images: 'text',
  file: 'attachment',
  document: 'attachment',
  media: 'attachment',
  question: 'widget',
  choice: 'widget',
  choices: 'widget',
  options: 'widget',
  secret: 'secret-request',
  credential: 'secret-request',
  password: 'secret-request',
  cursor_agent: 'cursor-agent',
  agent: 'cursor-agent',
  secret_request: 'secret-request',
};

/** Keys allowed at each object level, to list when an unknown key arrives. */
const KEYS_AT: Record<string, readonly string[]> = {
  'the input': ['type', ...SEND_MESSAGE_FIELDS],
  'images[]': Object.keys(imageInputSchema.shape),
  widget: Object.keys(widgetInputSchema.shape),
  'widget.options[]': Object.keys(widgetOptionInputSchema.shape),
  secret: Object.keys(secretInputSchema.shape),
};

/** What to do about a missing or empty field, by path pattern. */
const FILL_HINTS: Record<string, string> = {
  type: `Set it to one of: ${SEND_MESSAGE_TYPES.join(', ')}.`,
  'images[].url': 'Give each image a file:///absolute/path or https:// URL.',
  'widget.prompt': 'Write the question the user should answer.',
  'widget.options': `Give ${WIDGET_MIN_OPTIONS} to ${WIDGET_MAX_OPTIONS} options, each like {"label":"Yes"}.`,
  'widget.options[].label': 'Give every option a short label.',
  'secret.label': 'Say what you are asking for, e.g. "GitHub token".',
  'secret.connector': 'Name the connector, or use `name` for an environment variable instead.',
  'secret.field': 'Name the credential field of the connector.',
};

/** What to do about a value over its length limit, by path pattern. */
const SHORTEN_HINTS: Record<string, string> = {
  'widget.options[].label': 'Shorten it and move the detail into the option `description`.',
  'secret.label': 'Shorten it and move the detail into `secret.description`.',
};

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list (JSON array)',
  object: 'an object',
};

function describeIssue(issue: z.core.$ZodIssue, root: unknown, toolName: string): string[] {
  const path = issue.path;
  const at = formatPath(path);
  const pattern = pathPattern(path);
  const received = issue.input;
  switch (issue.code) {
    case 'custom':
      return [issue.message];
    case 'invalid_type': {
      if (path.length === 0) return [rootTypeProblem(root, toolName)];
      if (received === undefined) return [withHint(`\`${at}\` is missing.`, FILL_HINTS[pattern])];
      const expected = EXPECTED[issue.expected] ?? issue.expected;
      let hint: string | undefined;
      if (received === null) hint = 'Leave a field out instead of sending null.';
      else if (pattern === 'widget.options[]' && typeof received === 'string') {
        hint = `Write each option as an object: {"label":${JSON.stringify(received.slice(0, 40))}}.`;
      } else if (pattern === 'images[]' && typeof received === 'string') {
        hint = `Write each image as an object: {"url":${JSON.stringify(received.slice(0, 80))}}.`;
      }
      return [withHint(`\`${at}\` must be ${expected}; you sent ${describeValue(received)}.`, hint)];
    }
    case 'invalid_value': {
      const allowed = issue.values.map(String);
      if (pattern === 'type') return [typeProblem(received)];
      return [`\`${at}\` must be one of ${listOr(allowed)}; you sent ${describeValue(received)}.`];
    }
    case 'unrecognized_keys': {
      const allowed = KEYS_AT[pattern] ?? [];
      return issue.keys.map((key) => {
        const full = path.length === 0 ? key : `${at}.${key}`;
        const alias = pattern === 'the input' ? KEY_ALIASES[key] : undefined;
        return withHint(
          `\`${full}\` is not a field here; remove it.`,
          alias ?? `The fields here are: ${allowed.join(', ')}.`,
        );
      });
    }
    case 'too_big':
      return [tooBig(issue, at, pattern, received)];
    case 'too_small':
      if (issue.origin === 'array') {
        return [
          withHint(
            `\`${at}\` is empty; it needs at least ${count(Number(issue.minimum), 'item')}.`,
            FILL_HINTS[pattern],
          ),
        ];
      }
      return [withHint(`\`${at}\` is empty.`, FILL_HINTS[pattern])];
    case 'invalid_format':
      if (pattern === 'secret.name' && typeof received === 'string') return [envNameProblem(received)];
      return [`\`${at}\` is not in the expected format; you sent ${describeValue(received)}.`];
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
    case 'not_multiple_of':
      // The schema has no unions, records, maps or multiples; kept readable should one appear.
      return [`\`${at}\`: ${issue.message}; you sent ${describeValue(received)}.`];
    default:
      return assertNever(issue, 'zod issue');
  }
}

function withHint(line: string, hint: string | undefined): string {
  return hint === undefined ? line : `${line} ${hint}`;
}

function rootTypeProblem(root: unknown, toolName: string): string {
  const example = '{"type":"text","content":"Done: the report is attached below."}';
  let hint = '';
  if (typeof root === 'string') {
    try {
      const inner: unknown = JSON.parse(root);
      if (typeof inner === 'object' && inner !== null)
        hint = ' It looks like JSON text: pass the object itself.';
    } catch {
      // not JSON: the plain-text hint below applies
      hint = ' Plain text is not delivered: put it in `content` with type text.';
    }
  }
  return `${toolName} takes one JSON object of fields, such as ${example}; you sent ${describeValue(root)}.${hint}`;
}

function typeProblem(received: unknown): string {
  if (received === undefined) return `\`type\` is missing. ${FILL_HINTS.type ?? ''}`.trim();
  const guess =
    typeof received === 'string'
      ? TYPE_ALIASES[received.trim().toLowerCase().replace(/\s+/g, '_')]
      : undefined;
  const line = `\`type\` must be one of ${SEND_MESSAGE_TYPE_LIST}; you sent ${describeValue(received)}.`;
  return guess === undefined ? line : `${line} Did you mean ${guess}?`;
}

function tooBig(issue: z.core.$ZodIssueTooBig, at: string, pattern: string, received: unknown): string {
  const limit = Number(issue.maximum);
  if (issue.origin === 'array' && Array.isArray(received)) {
    return (
      `\`${at}\` has ${received.length} options; a widget takes ${WIDGET_MIN_OPTIONS} to ${WIDGET_MAX_OPTIONS}. ` +
      'Keep the ones that matter most, or ask in two steps.'
    );
  }
  if (typeof received === 'string') {
    const kind =
      limit === LABEL_MAX_CHARS ? 'label' : limit === DESCRIPTION_MAX_CHARS ? 'description' : 'value';
    return withHint(
      `\`${at}\` is ${received.length} characters; a ${kind} may have at most ${limit}.`,
      SHORTEN_HINTS[pattern] ?? 'Shorten it.',
    );
  }
  return `\`${at}\` is too long; the limit is ${limit}.`;
}

/** A close, valid environment variable name for what the model wrote. */
export function suggestEnvName(name: string): string {
  const upper = name
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (upper === '') return 'API_KEY';
  return /^[0-9]/.test(upper) ? `_${upper}` : upper;
}

function envNameProblem(name: string): string {
  return (
    '`secret.name` must be an environment variable name: capital letters, digits and underscores, ' +
    `not starting with a digit; you sent ${quote(name)}. Try ${quote(suggestEnvName(name))}.`
  );
}

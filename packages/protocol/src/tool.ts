/**
 * The send_message tool as offered to a model provider: name, description,
 * JSON Schema, and a Zod schema the AI SDK can take directly.
 *
 * The name on disk is always `send_message` (grok-bot-format.md §5); the name
 * the model sees is configurable (Grok Bot shows it as `SendMessage`).
 */
import { z } from 'zod';
import { sendMessageInputSchema } from './send-message-input.ts';
import type { SendMessageType } from './stored.ts';

/** The tool name written to the JSONL transcript. */
export const SEND_MESSAGE_TOOL_NAME = 'send_message';

/** One line per type. A total record, so a new type does not compile without its description. */
const TYPE_USES: Record<SendMessageType, string> = {
  text: '- text: a chat message in Markdown (`content`). Add pictures with `images`; answer a particular message with `reply_to`.',
  attachment:
    '- attachment: one real file or standalone media by `url` (file:///absolute/path for a file you made, or https://). It shows as a file card; never paste a file into text instead.',
  widget:
    "- widget: a question with 1 to 6 clickable options (`widget`). It ends your turn; the pick arrives as the user's next message.",
  'cursor-agent': '- cursor-agent: a card that opens a Cursor cloud agent identified by `bcId`.',
  'secret-request':
    '- secret-request: a masked input that asks the user for a credential (`secret`) and stores it in an environment variable (`name`) or a connector field (`connector` + `field`). This is the only way to ask for a secret.',
};

export function sendMessageDescription(name: string = SEND_MESSAGE_TOOL_NAME): string {
  return [
    'Show something to the user. This is the only way the user sees anything from you: your ordinary text output is private and never displayed.',
    `Each call makes one bubble in the chat; for two messages, call ${name} twice.`,
    '',
    'Choose `type`:',
    ...Object.values(TYPE_USES),
    '',
    'Send only the fields of the type you chose. If a call is rejected, the result says what to fix.',
  ].join('\n');
}

export type JsonSchemaTarget = 'draft-2020-12' | 'draft-7';
export type JsonSchemaObject = Record<string, unknown> & { type: 'object' };

/**
 * The input JSON Schema (the input side of the contract; cross-field rules
 * are not expressible in it and are checked by `validateSendMessage`).
 */
export function sendMessageJsonSchema(target: JsonSchemaTarget = 'draft-2020-12'): JsonSchemaObject {
  let schema = jsonSchemas.get(target);
  if (!schema) {
    const made = z.toJSONSchema(sendMessageInputSchema, { target, io: 'input', unrepresentable: 'throw' });
    if (made.type !== 'object') throw new Error('send_message JSON Schema must describe an object');
    schema = made as JsonSchemaObject;
    jsonSchemas.set(target, schema);
  }
  // A copy: the caller may change it (every agent's session makes the tool, so it is made once).
  return structuredClone(schema);
}

const jsonSchemas = new Map<JsonSchemaTarget, JsonSchemaObject>();

/**
 * A Zod schema for the AI SDK's `tool({ inputSchema })`. It shows the
 * provider the full contract, but lets every call through, so `execute` can
 * run `validateSendMessage` and return the model-readable problems as the
 * tool result. (Giving the SDK the strict schema instead would answer bad
 * calls with the SDK's own validation error text.)
 */
export function aiSdkInputSchema(): z.ZodType<unknown> {
  const { $schema: _drop, ...contract } = sendMessageJsonSchema('draft-7');
  return z.unknown().meta(contract);
}

export interface SendMessageTool {
  /** The name the model calls. */
  name: string;
  /** The name recorded in the JSONL transcript. */
  onDiskName: typeof SEND_MESSAGE_TOOL_NAME;
  description: string;
  /** For the AI SDK: advertises the contract, accepts any value (validate in `execute`). */
  inputSchema: z.ZodType<unknown>;
  /** The strict contract: shapes plus cross-field rules. */
  contractSchema: typeof sendMessageInputSchema;
  /** Draft 2020-12 JSON Schema for OpenAI-compatible function calling. */
  jsonSchema: JsonSchemaObject;
}

/** The tool definition; `name` is the model-facing name (default `send_message`). */
export function sendMessageTool(options: { name?: string | undefined } = {}): SendMessageTool {
  const name = options.name ?? SEND_MESSAGE_TOOL_NAME;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new Error(
      `tool name ${JSON.stringify(name)} must be 1-64 letters, digits, _ or - (provider limit)`,
    );
  }
  return {
    name,
    onDiskName: SEND_MESSAGE_TOOL_NAME,
    description: sendMessageDescription(name),
    inputSchema: aiSdkInputSchema(),
    contractSchema: sendMessageInputSchema,
    jsonSchema: sendMessageJsonSchema(),
  };
}

import { asSchema } from '@ai-sdk/provider-utils';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { validateSendMessage } from './errors.ts';
import { SEND_MESSAGE_TOOL_NAME, sendMessageJsonSchema, sendMessageTool } from './tool.ts';

const VALID_INPUTS = [
  { type: 'text', content: 'Working on it.' },
  { type: 'text', content: 'See', images: [{ url: 'https://x.test/a.png', alt: 'a' }], reply_to: 't1u' },
  { type: 'attachment', url: 'file:///home/box/out.pdf', alt: 'Report' },
  {
    type: 'widget',
    widget: {
      prompt: 'Deploy?',
      helpText: 'h',
      options: [{ label: 'Yes', value: 'y', description: 'd', style: 'primary' }],
      allowCustom: true,
      multiSelect: false,
    },
  },
  { type: 'cursor-agent', bcId: 'bc-1', title: 'T' },
  { type: 'secret-request', secret: { label: 'GitHub token', description: 'd', name: 'GITHUB_TOKEN' } },
  { type: 'secret-request', secret: { label: 'Slack', connector: 'slack', field: 'bot_token' } },
];

/** Every sub-schema of a JSON Schema, depth first. */
function* walk(node: unknown): Generator<Record<string, unknown>> {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) yield* walk(item);
    return;
  }
  const record = node as Record<string, unknown>;
  yield record;
  for (const value of Object.values(record)) yield* walk(value);
}

describe('JSON Schema', () => {
  test('is valid draft 2020-12 and accepts every valid input', () => {
    const schema = sendMessageJsonSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const validate = new Ajv2020({ strict: true }).compile(schema);
    for (const input of VALID_INPUTS) {
      expect(validateSendMessage(input).ok).toBe(true);
      expect(validate(input), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  test('is made once per target, and each caller gets a copy of its own', () => {
    const first = sendMessageJsonSchema();
    (first as Record<string, unknown>).$schema = 'changed by a caller';
    const second = sendMessageJsonSchema();
    expect(second.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(second).not.toBe(sendMessageJsonSchema());
    expect(sendMessageJsonSchema('draft-7').$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  test('is valid draft-07 too', () => {
    const schema = sendMessageJsonSchema('draft-7');
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const validate = new Ajv({ strict: true }).compile(schema);
    for (const input of VALID_INPUTS) expect(validate(input)).toBe(true);
  });

  test('carries the per-field limits a provider can use', () => {
    const validate = new Ajv2020().compile(sendMessageJsonSchema());
    expect(validate({ type: 'poll' })).toBe(false);
    expect(validate({ type: 'text', content: 'x', extra: 1 })).toBe(false);
    const seven = Array.from({ length: 7 }, (_, i) => ({ label: String(i) }));
    expect(validate({ type: 'widget', widget: { prompt: 'Q', options: seven } })).toBe(false);
    expect(validate({ type: 'widget', widget: { prompt: 'Q', options: [{ label: 'x'.repeat(121) }] } })).toBe(
      false,
    );
    expect(validate({ type: 'secret-request', secret: { label: 'k', name: 'bad-name' } })).toBe(false);
  });

  test('fits OpenAI-compatible function calling: a plain object at the top, no refs, no top-level combinators', () => {
    const schema = sendMessageJsonSchema();
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['type']);
    expect(schema.additionalProperties).toBe(false);
    for (const key of ['anyOf', 'oneOf', 'allOf', 'not', 'enum']) expect(schema).not.toHaveProperty(key);
    for (const node of walk(schema)) {
      expect(node).not.toHaveProperty('$ref');
      expect(node).not.toHaveProperty('$defs');
      expect(node).not.toHaveProperty('definitions');
    }
  });

  test('describes every field for the model', () => {
    const properties = sendMessageJsonSchema().properties as Record<string, { description?: string }>;
    for (const [name, property] of Object.entries(properties)) {
      expect(property.description, name).toBeTruthy();
    }
  });
});

describe('sendMessageTool', () => {
  test('names: on disk always send_message, model-facing configurable', () => {
    expect(sendMessageTool()).toMatchObject({ name: 'send_message', onDiskName: SEND_MESSAGE_TOOL_NAME });
    const renamed = sendMessageTool({ name: 'SendMessage' });
    expect(renamed).toMatchObject({ name: 'SendMessage', onDiskName: 'send_message' });
    expect(renamed.description).toContain('call SendMessage twice');
    expect(() => sendMessageTool({ name: 'send message' })).toThrow(/must be 1-64 letters/);
  });

  test('the description tells the model what matters', () => {
    const { description } = sendMessageTool();
    expect(description).toContain('your ordinary text output is private and never displayed');
    expect(description).toContain('Each call makes one bubble');
    for (const type of ['text', 'attachment', 'widget', 'cursor-agent', 'secret-request']) {
      expect(description).toContain(`- ${type}: `);
    }
  });

  test('the AI SDK sees the full contract but lets every call reach execute', async () => {
    const schema = asSchema(sendMessageTool().inputSchema);
    const sent = await schema.jsonSchema;
    const { $schema: _a, ...expected } = sendMessageJsonSchema('draft-7');
    const { $schema: _b, ...actual } = sent as Record<string, unknown>;
    expect(actual).toEqual(expected);
    // A bad call passes the SDK untouched, so execute can answer it with validateSendMessage.
    const bad = { type: 'attachment', url: 'C:/x.pdf' };
    const result = await schema.validate?.(bad);
    expect(result).toEqual({ success: true, value: bad });
  });

  test('the contract schema itself enforces the rules', () => {
    expect(sendMessageTool().contractSchema.safeParse({ type: 'attachment', url: 'C:/x.pdf' }).success).toBe(
      false,
    );
  });
});

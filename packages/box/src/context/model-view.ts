/**
 * How tool results and transcript records read to the model. One place, so
 * a live turn and a history rebuilt from the JSONL after a restart give the
 * model the same text.
 */
import type { ModelMessage } from '../providers/types.ts';
import type { JsonObject, JsonValue } from '@sendbox/txcript';
import { supersededBy } from '@sendbox/protocol';
import { mcpCallFromRecord } from '../tools/mcp/record.ts';
import type { HostTool, ToolModelOutput } from '../tools/types.ts';
import { sendInputAsRead } from './send-input.ts';
import { modelCallOf } from '../tools/communicate-update.ts';

/** The tools whose own reading of a result (`HostTool.modelOutput`) the model gets, by name. */
export type ToolReaders = ReadonlyMap<string, Pick<HostTool, 'modelOutput'>>;

export function toolReaders(tools: readonly HostTool[]): ToolReaders {
  return new Map(tools.map((tool) => [tool.name, tool]));
}

/** What the model sees for a tool result envelope: the tool's own reading, else the default one. */
export function modelOutputFor(toolName: string, envelope: JsonValue, tools?: ToolReaders): ToolModelOutput {
  const own = tools?.get(toolName)?.modelOutput?.(envelope);
  if (own) return own;
  if (isObject(envelope)) {
    const success = envelope.success;
    if (toolName === 'send_message' && isObject(success) && typeof success.messageId === 'string') {
      return { type: 'text', value: `Message sent to user. (id: ${success.messageId})` };
    }
    const error = envelope.error;
    if (isObject(error) && typeof error.error === 'string') return { type: 'error-text', value: error.error };
    // read's real key (grok-bot-format.md §5).
    if (isObject(error) && typeof error.errorMessage === 'string')
      return { type: 'error-text', value: error.errorMessage };
    if (typeof error === 'string') return { type: 'error-text', value: error };
    const spawn = envelope.spawnError;
    if (isObject(spawn) && typeof spawn.error === 'string')
      return { type: 'error-text', value: `Could not start the command: ${spawn.error}` };
  }
  return { type: 'text', value: JSON.stringify(envelope) };
}

/**
 * Drops the user message whose `[userId]` address tag opens it, and everything after it (protocol
 * revisions.ts); nothing when no message has that tag.
 */
function withdrawFrom(out: ModelMessage[], userId: string): void {
  const tag = `[${userId}]`;
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    const first = message.content[0];
    if (first?.type === 'text' && first.text.startsWith(tag)) {
      out.length = i;
      return;
    }
  }
}

/** A `<system_reminder>` block as a whole text part: guidance or a reminder older boxes wrote into user records. */
const WRITTEN_INJECTION = /^\s*<system_reminder>[\s\S]*<\/system_reminder>\s*$/;

/**
 * Rebuilds the model conversation from JSONL record objects (`{role,
 * message:{content}}`), for an agent loaded after a restart: the history as
 * the session keeps it, without guidance or reminders (they are added per
 * model call, context/injections.ts; those an older box wrote into
 * user records are dropped, so they are not read twice). Records the box
 * did not write (unknown roles, malformed lines) are skipped. A tool call
 * whose result never landed (a crash mid-tool) gets an error result, so the
 * conversation stays valid for the provider. A step's text record comes
 * before its calls, so an assistant text record after other assistant
 * content starts the next step. `tools` read their own results as they did live.
 * A `send_message` call reads as the model sent it (`{type, …}`, context/send-input.ts);
 * `sends` finds a delivered send's ledger entry by its message id.
 */
export function historyFromRecords(
  records: readonly JsonObject[],
  tools?: ToolReaders,
  sends?: (messageId: string) => unknown,
): ModelMessage[] {
  const out: ModelMessage[] = [];
  let assistant: Extract<ModelMessage, { role: 'assistant' }> | null = null;
  let tool: Extract<ModelMessage, { role: 'tool' }> | null = null;
  type CallPart = { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown };
  /** Calls awaiting their result: `recorded` is the name the JSONL pairs the result by. */
  let pending: Array<{ id: string; name: string; recorded: string; part: CallPart; raw: JsonObject }> = [];

  // The tool message of the current exchange, pushed when it is made (a lookup in `out` would be quadratic).
  const toolMessage = (): Extract<ModelMessage, { role: 'tool' }> => {
    if (!tool) {
      tool = { role: 'tool', content: [] };
      out.push(tool);
    }
    return tool;
  };

  const closeCalls = () => {
    if (pending.length) {
      const results = toolMessage();
      for (const call of pending) {
        if (call.name === 'send_message') call.part.input = sendInputAsRead(call.raw);
        results.content.push({
          type: 'tool-result',
          toolCallId: call.id,
          toolName: call.name,
          output: {
            type: 'error-text',
            value: 'This tool call was interrupted (the host restarted) and has no result.',
          },
        });
      }
      pending = [];
    }
    assistant = null;
    tool = null;
  };

  for (const record of records) {
    const role = record.role;
    const message = record.message;
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    const blocks = message.content.filter(isObject);
    if (role === 'user') {
      closeCalls();
      const texts = blocks.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));
      // A prompt sent in place of an earlier one: the model reads as if that turn never was.
      for (const userId of texts.map(supersededBy)) if (userId !== undefined) withdrawFrom(out, userId);
      const parts = texts
        .filter((text) => !WRITTEN_INJECTION.test(text) && supersededBy(text) === undefined)
        .map((text) => ({ type: 'text' as const, text }));
      if (parts.length) out.push({ role: 'user', content: parts });
    } else if (role === 'assistant') {
      const startsStep = blocks.some((b) => b.type === 'text' && typeof b.text === 'string');
      if (tool || (startsStep && assistant !== null && assistant.content.length > 0)) {
        // A new assistant record after results, or a step's text after another step, starts the next exchange.
        assistant = null;
        tool = null;
      }
      if (!assistant) {
        assistant = { role: 'assistant', content: [] };
        out.push(assistant);
      }
      const content = assistant.content as Exclude<typeof assistant.content, string>;
      for (const block of blocks) {
        if (block.type === 'text' && typeof block.text === 'string') {
          content.push({ type: 'text', text: block.text });
        } else if (block.type === 'tool_use' && typeof block.name === 'string' && isObject(block.input)) {
          const { toolCallId, ...recordedInput } = block.input;
          const id = typeof toolCallId === 'string' ? toolCallId : `call_${out.length}_${content.length}`;
          // A host tool recorded as Grok Bot records its own (update_state), or a dynamic MCP tool
          // (tools/mcp/record.ts), reads as the call the model made.
          const made = modelCallOf(block.name, recordedInput) ??
            mcpCallFromRecord(block.name, recordedInput) ?? { name: block.name, input: recordedInput };
          const part: CallPart = {
            type: 'tool-call',
            toolCallId: id,
            toolName: made.name,
            input: made.input,
          };
          content.push(part);
          pending.push({ id, name: made.name, recorded: block.name, part, raw: block.input });
        }
      }
    } else if (role === 'tool') {
      for (const block of blocks) {
        if (block.type !== 'tool_result' || typeof block.name !== 'string') continue;
        const at = pending.findIndex((call) => call.recorded === block.name);
        if (at < 0) continue;
        const [call] = pending.splice(at, 1);
        if (!call) continue;
        if (call.name === 'send_message') {
          const messageId = sentMessageId(block.result);
          call.part.input = sendInputAsRead(
            call.raw,
            messageId === undefined ? undefined : sends?.(messageId),
          );
        }
        toolMessage().content.push({
          type: 'tool-result',
          toolCallId: call.id,
          toolName: call.name,
          output: modelOutputFor(call.name, block.result ?? null, tools),
        });
      }
    }
  }
  closeCalls();
  return out.filter((m) => m.role !== 'assistant' || (Array.isArray(m.content) && m.content.length > 0));
}

function sentMessageId(result: unknown): string | undefined {
  if (!isObject(result) || !isObject(result.success)) return undefined;
  const id = result.success.messageId;
  return typeof id === 'string' ? id : undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

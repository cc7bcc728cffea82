/**
 * An MCP tool result as the JSONL records it (grok-bot-format.md §5) and as the model reads it:
 *
 * - `success{content:[{text}]}`, an image as `{image:{data, mimeType}}` beside (sendbox's; the
 *   model sees it as an image);
 * - `success{isError:true, content:[{text:{text}}]}` for a tool's own error;
 * - over 64 KB of text: the text goes to a file of the sandbox and the record holds
 *   `success{content:[{outputLocation:{filePath, sizeBytes, lineCount}}]}`.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject, JsonValue } from '@sendbox/txcript';
import { withDeadline, writeInSandbox } from '../../sandbox/paths.ts';
import { isJsonObject, jsonArray, successFields, type ToolContext, type ToolModelOutput } from '../types.ts';

export const MCP_INLINE_LIMIT_BYTES = 64 * 1024;
/** Where spilled results go, inside the agent's sandbox. */
export const MCP_RESULTS_FOLDER = 'mcp-results';

type Part = { text: string } | { image: { data: string; mimeType: string } };

/** The parts of a result, text first-class; what the model cannot take as it is becomes a line of text. */
function partsOf(result: CallToolResult): Part[] {
  const parts: Part[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push({ text: item.text });
        break;
      case 'image':
        parts.push({ image: { data: item.data, mimeType: item.mimeType } });
        break;
      case 'audio':
        parts.push({
          text: `[audio, ${item.mimeType}, ${Math.floor((item.data.length * 3) / 4)} bytes: not shown]`,
        });
        break;
      case 'resource':
        parts.push({
          text:
            'text' in item.resource
              ? item.resource.text
              : `[resource ${item.resource.uri}${item.resource.mimeType ? `, ${item.resource.mimeType}` : ''}: binary, not shown]`,
        });
        break;
      case 'resource_link':
        parts.push({ text: `[resource ${item.name}: ${item.uri}]` });
        break;
    }
  }
  if (parts.length === 0 && result.structuredContent) {
    parts.push({ text: JSON.stringify(result.structuredContent) });
  }
  return parts;
}

/** The recorded envelope of a result, its text spilled to a sandbox file when over the limit. */
export async function recordedResult(
  result: CallToolResult,
  where: { server: string; tool: string; toolCallId: string },
  ctx: Pick<ToolContext, 'sandboxDir' | 'disk' | 'scrub'>,
): Promise<{ success: JsonObject }> {
  const parts = partsOf(result).map((part) => ('text' in part ? { text: ctx.scrub.text(part.text) } : part));
  if (result.isError === true) {
    // Real files nest the text of an error result one level deeper.
    const content = parts.map((part) => ('text' in part ? { text: { text: part.text } } : part));
    return { success: { isError: true, content } };
  }
  const text = parts.flatMap((part) => ('text' in part ? [part.text] : [])).join('\n');
  const sizeBytes = Buffer.byteLength(text);
  if (sizeBytes <= MCP_INLINE_LIMIT_BYTES) return { success: { content: parts } };
  const name = `${where.server}-${where.tool}-${where.toolCallId}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  await ctx.disk?.reserve(sizeBytes);
  const filePath = await withDeadline(`Saving the result of ${where.tool}`, () =>
    writeInSandbox(ctx.sandboxDir, `${MCP_RESULTS_FOLDER}/${name}.txt`, text),
  );
  const lineCount = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const images = parts.filter((part) => 'image' in part);
  return { success: { content: [{ outputLocation: { filePath, sizeBytes, lineCount } }, ...images] } };
}

/** What the model reads of a recorded MCP result, live and after a restart. */
export function mcpModelOutput(recorded: JsonValue): ToolModelOutput | undefined {
  const success = successFields(recorded);
  if (!success) return undefined;
  const content = jsonArray(success.content).filter(isJsonObject);
  if (success.isError === true) {
    const text = content
      .map((item) => (isJsonObject(item.text) ? str(item.text.text) : textOf(item)))
      .join('\n');
    return { type: 'error-text', value: `The MCP tool returned an error:\n${text}` };
  }
  const out: Array<{ type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string }> =
    [];
  for (const item of content) {
    const spilled = item.outputLocation;
    if (isJsonObject(spilled)) {
      out.push({
        type: 'text',
        text:
          `The result is ${str(spilled.sizeBytes)} bytes (${str(spilled.lineCount)} lines), too large to show here. ` +
          `It was saved to ${str(spilled.filePath)}: read it in parts with read (offset, limit) or search it with grep.`,
      });
    } else if (isJsonObject(item.image)) {
      out.push({ type: 'image-data', data: str(item.image.data), mediaType: str(item.image.mimeType) });
    } else {
      out.push({ type: 'text', text: textOf(item) });
    }
  }
  if (out.every((part) => part.type === 'text')) {
    return {
      type: 'text',
      value: out.map((part) => (part.type === 'text' ? part.text : '')).join('\n') || '(empty result)',
    };
  }
  return { type: 'content', value: out };
}

function textOf(item: JsonObject): string {
  return typeof item.text === 'string' ? item.text : JSON.stringify(item);
}

function str(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null);
}

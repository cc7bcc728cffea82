/**
 * How a call of `mcp` is written to the JSONL, as Grok Bot writes a dynamic MCP tool
 * (grok-bot-format.md §5, docs/formats/grok-bot.md "MCP tools"): under the tool's bare name, with
 * input `{name, args, toolCallId, providerIdentifier, toolName, serverIdentifier}`. `name` is
 * `user-<server>-<tool>` and `providerIdentifier` `user-<server>` (a server the user configured,
 * as real files' `user-Github-…`). A history rebuilt from the file reads it back as the `mcp`
 * call the model made.
 */
import type { JsonObject } from '@sendbox/txcript';

export function recordedMcpInput(server: string, tool: string, args: JsonObject): JsonObject {
  return {
    name: `user-${server}-${tool}`,
    args,
    providerIdentifier: `user-${server}`,
    toolName: tool,
    serverIdentifier: server,
  };
}

/** The `mcp` call a recorded dynamic MCP tool call was, or null for any other record. */
export function mcpCallFromRecord(
  name: string,
  input: JsonObject,
): { name: 'mcp'; input: JsonObject } | null {
  const { toolName, serverIdentifier, providerIdentifier, args } = input;
  if (typeof toolName !== 'string' || typeof serverIdentifier !== 'string') return null;
  if (typeof providerIdentifier !== 'string' || toolName !== name) return null;
  return { name: 'mcp', input: { server: serverIdentifier, toolName, args: args ?? {} } };
}

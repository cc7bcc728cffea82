/**
 * The model's two MCP tools (docs/mcp-client.md). Discovery is lazy: the prompt carries these two
 * tools and nothing of the servers' own, which `get_mcp_tools` lists on demand:
 *
 * - `get_mcp_tools {}`: the servers, one line each; `{server}`: its tools with their input
 *   schemas; `{server, toolName}`: that one tool.
 * - `mcp {server, toolName, args}`: calls a tool, its args checked against the tool's schema first
 *   (the error names each field to fix). Recorded under the tool's bare name (record.ts).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonObject } from '@sendbox/txcript';
import { z } from 'zod';
import { McpCallError } from '../../mcp/connection.ts';
import { McpAuthRequired } from '../../mcp/oauth.ts';
import { defineTool, errorOutcome, oneLine, type ToolContext, type ToolOutcome } from '../types.ts';
import { recordedMcpInput } from './record.ts';
import { mcpModelOutput, recordedResult } from './result.ts';

const NO_SERVERS =
  'No MCP servers are configured for you. The user adds them in the settings panel (MCP servers) or in mcp.json.';

export const getMcpToolsInput = z.strictObject({
  server: z.string().min(1).optional().describe('A server name from get_mcp_tools {}: lists its tools.'),
  toolName: z.string().min(1).optional().describe('With server: just this tool, with its input schema.'),
});

export const getMcpToolsTool = defineTool({
  name: 'get_mcp_tools',
  description:
    'Discover the tools of your MCP servers (connectors). With no arguments: your servers, one line each. ' +
    'With server: its tools, their descriptions and input schemas. With server and toolName: that tool. ' +
    'Then call a tool with mcp {server, toolName, args}.',
  input: getMcpToolsInput,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.mcp) return errorOutcome(NO_SERVERS, 'no MCP servers');
    if (input.toolName !== undefined && input.server === undefined) {
      return errorOutcome(
        'toolName needs server: call get_mcp_tools {server, toolName}.',
        'toolName without server',
      );
    }
    try {
      if (input.server === undefined) {
        const servers = await ctx.mcp.servers();
        if (servers.length === 0) return errorOutcome(NO_SERVERS, 'no MCP servers');
        return {
          envelope: {
            success: {
              servers: servers.map((s) => ({ name: s.name, description: s.description, state: s.state })),
            },
          },
          summary: `${servers.length} MCP server${servers.length === 1 ? '' : 's'}`,
        };
      }
      const tools = await ctx.mcp.tools(input.server, ctx.signal);
      if (input.toolName !== undefined) {
        const tool = tools.find((t) => t.name === input.toolName);
        if (!tool) return errorOutcome(unknownTool(input.server, input.toolName, tools), 'no such MCP tool');
        return {
          envelope: { success: { server: input.server, tools: [toolView(tool)] } },
          summary: `${input.server}/${tool.name}`,
        };
      }
      return {
        envelope: { success: { server: input.server, tools: tools.map(toolView) } },
        summary: `${input.server}: ${tools.length} tool${tools.length === 1 ? '' : 's'}`,
      };
    } catch (error) {
      return failure(error, ctx);
    }
  },
});

export const mcpInput = z.strictObject({
  server: z.string().min(1).describe('The server, as get_mcp_tools names it.'),
  toolName: z.string().min(1).describe("The server's tool to call."),
  args: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("The tool's arguments, matching its input schema (get_mcp_tools {server, toolName})."),
});

const validators = new AjvJsonSchemaValidator();

export const mcpTool = defineTool({
  name: 'mcp',
  description:
    'Call a tool of one of your MCP servers: mcp {server, toolName, args}. Find the servers, tools and ' +
    'argument schemas with get_mcp_tools first.',
  input: mcpInput,
  recordedName: (input) => input.toolName,
  recordedInput: (input) => recordedMcpInput(input.server, input.toolName, input.args as JsonObject),
  modelOutput: mcpModelOutput,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.mcp) return errorOutcome(NO_SERVERS, 'no MCP servers');
    const label = `${input.server}/${input.toolName}`;
    try {
      const tools = await ctx.mcp.tools(input.server, ctx.signal);
      const tool = tools.find((t) => t.name === input.toolName);
      if (!tool) return errorOutcome(unknownTool(input.server, input.toolName, tools), 'no such MCP tool');
      const check = validators.getValidator(tool.inputSchema)(input.args);
      if (!check.valid) {
        return errorOutcome(
          `The args of ${label} do not match its input schema: ${check.errorMessage ?? 'invalid'}. ` +
            `Fix them and call mcp again. The schema: ${JSON.stringify(tool.inputSchema)}`,
          'args do not match the schema',
        );
      }
      const result = await ctx.mcp.call(input.server, input.toolName, input.args, ctx.signal);
      const envelope = await recordedResult(
        result,
        { server: input.server, tool: input.toolName, toolCallId: ctx.call?.toolCallId ?? String(ctx.now()) },
        ctx,
      );
      return { envelope, summary: oneLine(`${label}${result.isError ? ' (tool error)' : ''}`) };
    } catch (error) {
      return failure(error, ctx);
    }
  },
});

function toolView(tool: Tool): JsonObject {
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as JsonObject,
  };
}

function unknownTool(server: string, name: string, tools: Tool[]): string {
  return (
    `The MCP server ${server} has no tool named ${JSON.stringify(name)}. ` +
    `Its tools: ${tools.map((t) => t.name).join(', ') || '(none)'}.`
  );
}

function failure(error: unknown, ctx: ToolContext): ToolOutcome {
  const message = ctx.scrub.text((error as Error).message);
  if (error instanceof McpAuthRequired) {
    // The "Connect <server>" card: Grok Bot's `notice` kind (a reader shows its text), with the
    // server the page's button connects (gateway `startMcpConnect`).
    ctx.appendEntry?.({
      id: `connect-${ctx.call?.toolCallId ?? String(ctx.now())}`,
      kind: 'notice',
      text: `Connect ${error.server}: the MCP server ${error.server} needs you to sign in before your agent can use it.`,
      connect: { server: error.server },
      timestampMs: ctx.now(),
    });
    return errorOutcome(message, `${error.server} needs the user to connect it`);
  }
  if (error instanceof McpCallError) return errorOutcome(message);
  return errorOutcome(`The MCP call failed: ${message}`);
}

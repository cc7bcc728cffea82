/**
 * What one agent's tools see of the box's MCP servers (the `ToolContext`'s `mcp`): the servers it
 * may use, their tools, and calls. The hub (hub.ts) gives each agent its own, limited by the
 * agent's profile (`mcp: {servers: [...]}`).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalMode } from './config.ts';

export interface McpServerView {
  name: string;
  /** One line: the config's description, else the server's own (once it ran), else how to learn more. */
  description: string;
  transport: 'stdio' | 'http' | 'builtin';
  state: 'stopped' | 'starting' | 'ready' | 'failed';
  lastError?: string;
}

export interface McpAccess {
  /** The servers this agent may use, enabled ones only. */
  servers(): Promise<McpServerView[]>;
  /** A server's tools (starting it); throws `McpCallError` with a model-readable message. */
  tools(server: string, signal?: AbortSignal): Promise<Tool[]>;
  /** Calls a tool; throws `McpCallError` (model-readable) when the call could not be made. */
  call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  /** What mcp.json says about asking before `tool` of `server` runs. */
  approval(server: string, tool: string): Promise<ApprovalMode>;
}

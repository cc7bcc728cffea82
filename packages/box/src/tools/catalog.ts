/**
 * The tools an agent is given besides `send_message` (which the turn dispatches through its send
 * gate, tools/send-message/). Each tool is a folder beside this file: its input schema, its `run`,
 * its on-disk record and its tests. Adding a tool is its folder and one line below; what it needs
 * from the host (confinement, egress, the web) comes in `ToolCatalogOptions`.
 */
import type { Confinement } from '../sandbox/confinement.ts';
import type { SandboxDisks } from '../sandbox/disk-quota.ts';
import type { EgressProxies } from '../sandbox/egress-proxy.ts';
import { awaitTool } from './await/index.ts';
import { deleteTool } from './delete/index.ts';
import { editTool } from './edit/index.ts';
import { globTool } from './glob/index.ts';
import { grepTool, type GrepOptions } from './grep/index.ts';
import { lsTool } from './ls/index.ts';
import { getMcpToolsTool, mcpTool } from './mcp/index.ts';
import { readTool } from './read/index.ts';
import { shellTool, type ShellOptions } from './shell/index.ts';
import { taskTool } from './task/index.ts';
import type { HostTool } from './types.ts';
import { updateStateTool } from './update-state/index.ts';
import { updateTodosTool } from './update-todos/index.ts';
import { webFetchTool, type PageFetch } from './web-fetch/index.ts';
import type { SearchBackend } from './web-search/backends.ts';
import { webSearchTool } from './web-search/index.ts';
import { writeTool } from './write/index.ts';

export interface ToolCatalogOptions {
  /** How tool processes are confined (or refused); see detectConfinement. */
  confinement: Confinement;
  /** Egress proxies for agents with an allowlist; without them sandboxes have no network at all. */
  egress?: EgressProxies;
  /** The sandboxes' disk quota, checked around each command. */
  disk?: SandboxDisks;
  /** The shell's limits (timeout, output cap). */
  shell?: Omit<ShellOptions, 'confinement' | 'egress' | 'disk'>;
  /** grep's ripgrep binary and timeout. */
  grep?: Omit<GrepOptions, 'confinement'>;
  /** Where `web_search` asks (web-search/backends.ts); none: the tool is not offered. */
  search?: SearchBackend | null;
  /** How `web_fetch` reaches pages (the outbound client, web-fetch/outbound.ts); none: not offered. */
  pageFetch?: PageFetch | null;
}

/** Every tool, in the order the model is told of them. */
export function toolCatalog(options: ToolCatalogOptions): HostTool[] {
  const tools: HostTool[] = [
    shellTool({
      ...options.shell,
      confinement: options.confinement,
      egress: options.egress,
      disk: options.disk,
    }),
    readTool,
    writeTool,
    editTool,
    grepTool({ ...options.grep, confinement: options.confinement }),
    globTool,
    lsTool,
    deleteTool,
    ...(options.search ? [webSearchTool(options.search)] : []),
    ...(options.pageFetch ? [webFetchTool({ fetch: options.pageFetch })] : []),
    updateTodosTool,
    // The agent's own state: each part's handler comes from its room (tools/update-state/).
    updateStateTool,
    // MCP servers (mcp/): discovered lazily, through the ToolContext's `mcp`.
    getMcpToolsTool,
    mcpTool,
    // Background work: they act through the ToolContext's `tasks` and `subagents` (subagents/).
    awaitTool,
    taskTool,
  ] as HostTool[];
  return tools;
}

/** The tools one agent is offered: its profile may turn `web_fetch` off (`web: {fetch: "off"}`). */
export function toolsForProfile(
  tools: readonly HostTool[],
  profile: { web?: { fetch?: 'on' | 'off' } | undefined },
): readonly HostTool[] {
  if (profile.web?.fetch !== 'off') return tools;
  return tools.filter((tool) => tool.name !== 'web_fetch');
}

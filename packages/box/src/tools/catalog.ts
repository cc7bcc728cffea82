/**
 * The tools an agent is given besides `send_message` (which the turn dispatches through its send
 * gate, tools/send-message/). Each tool is a folder beside this file: its input schema, its `run`,
 * its on-disk record and its tests. Adding a tool is its folder and one line below; what it needs
 * from the host (confinement, egress...) comes in `ToolCatalogOptions`.
 */
import type { Confinement } from '../sandbox/confinement.ts';
import type { EgressProxies } from '../sandbox/egress-proxy.ts';
import { readTool } from './read/index.ts';
import { shellTool, type ShellOptions } from './shell/index.ts';
import type { HostTool } from './types.ts';
import { updateTodosTool } from './update-todos/index.ts';
import { writeTool } from './write/index.ts';

export interface ToolCatalogOptions {
  /** How tool processes are confined (or refused); see detectConfinement. */
  confinement: Confinement;
  /** Egress proxies for agents with an allowlist; without them sandboxes have no network at all. */
  egress?: EgressProxies;
  /** The shell's limits (timeout, output cap). */
  shell?: Omit<ShellOptions, 'confinement' | 'egress'>;
}

/** Every tool, in the order the model is told of them. */
export function toolCatalog(options: ToolCatalogOptions): HostTool[] {
  return [
    shellTool({ ...options.shell, confinement: options.confinement, egress: options.egress }),
    readTool,
    writeTool,
    updateTodosTool,
  ] as HostTool[];
}

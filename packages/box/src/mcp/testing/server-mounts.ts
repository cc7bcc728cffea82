/**
 * The folders the test MCP server (stdio-server.mjs) reads, for its mcp.json `readOnly`: the
 * checkout, and the install its SDK really lives in when that is elsewhere (in a git worktree,
 * node_modules or the packages in it are links into another checkout's install, which the
 * confinement does not show unless it is mounted too).
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

export function testServerMounts(root: string): string[] {
  const sdk = realpathSync(path.join(root, 'node_modules', '@modelcontextprotocol', 'sdk'));
  const marker = `${path.sep}node_modules${path.sep}`;
  const modules = sdk.slice(0, sdk.lastIndexOf(marker) + marker.length - 1);
  const inside = !path.relative(root, modules).startsWith('..');
  return inside ? [root] : [root, modules];
}

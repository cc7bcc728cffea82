/**
 * The MCP servers of the settings panel (docs/gateway.md, "MCP servers"): `getMcpSettings` lists
 * mcp.json's servers with their status and tools and the file's problems; `setMcpServer`,
 * `removeMcpServer` and `setMcpSessions` rewrite mcp.json atomically (its other servers and
 * unknown keys kept); `testMcpServer` starts an entry, saved or not, and lists its tools.
 */
import { z } from 'zod';
import { method } from './method-spec.ts';

const serverName = z.string().min(1, 'the server needs a name').max(64);
/** One mcpServers entry as the user wrote it; mcp.json's own checks decide (mcp/config.ts). */
const serverEntry = z.record(z.string(), z.unknown(), { message: 'a server is a JSON object' });

export const mcpMethods = {
  getMcpSettings: method(z.object({}), ({ host }) => host.mcpSettings.view()),
  setMcpServer: method(
    z.object({ name: serverName, server: serverEntry, previousName: serverName.optional() }),
    ({ host }, { name, server, previousName }) => host.mcpSettings.set(name, server, previousName),
  ),
  removeMcpServer: method(z.object({ name: serverName }), ({ host }, { name }) =>
    host.mcpSettings.remove(name),
  ),
  setMcpSessions: method(z.object({ enabled: z.boolean() }), ({ host }, { enabled }) =>
    host.mcpSettings.setSessions(enabled),
  ),
  testMcpServer: method(z.object({ name: serverName, server: serverEntry }), ({ host }, { name, server }) =>
    host.mcpSettings.test(name, server),
  ),
};

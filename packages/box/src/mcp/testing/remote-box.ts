/** A real box and gateway with an mcp.json, for the remote-server and OAuth tests. */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { HostEvent } from '../../agent/events.ts';
import { startTestBox, type TestBox } from '../../gateway/test-support.ts';
import type { LocalAgentHost } from '../../host/agent-host.ts';
import type { ScriptedProvider } from '../../providers/scripted.ts';

export interface RemoteBox {
  box: TestBox;
  agentId: string;
  events: HostEvent[];
  /** Sends a prompt through the gateway and waits for its turn to end. */
  prompt: (text: string) => Promise<void>;
}

export async function remoteBox(
  model: ScriptedProvider,
  mcpServers: Record<string, unknown>,
  log: (line: string) => void = () => {},
): Promise<RemoteBox> {
  const box = await startTestBox(model, { hostOptions: { mcp: { log } } });
  await writeFile(path.join(box.dataDir, 'mcp.json'), JSON.stringify({ mcpServers }));
  const created = (await box.call('createAgent', { name: 'Remote' })).body as { agent: { id: string } };
  const events: HostEvent[] = [];
  box.host.subscribe((event) => events.push(event));
  const agentId = created.agent.id;
  let nonce = 0;
  return {
    box,
    agentId,
    events,
    prompt: async (text) => {
      await box.call('sendPrompt', { agentId, prompt: text, clientNonce: `n-${++nonce}` });
      await (box.host as LocalAgentHost).idle(agentId);
    },
  };
}

/** Every file under `dir`, its bytes read as latin1 (a grep over the data dir). */
export async function everyFile(dir: string): Promise<Array<{ file: string; text: string }>> {
  const out: Array<{ file: string; text: string }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, text: (await readFile(file)).toString('latin1') });
  }
  return out;
}

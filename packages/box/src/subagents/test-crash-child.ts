/**
 * Test helper (agent-background.crash.test.ts), run as its own process: a real box on the data
 * dir in argv[2], whose agent starts a background command and then a foreground subagent whose
 * command blocks. It prints the agent's id and waits to be killed.
 */
import { createAgentHost } from '../host/agent-host.ts';
import { scriptedProvider, withScript } from '../providers/scripted.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: test-crash-child.ts <dataDir>');
const child = withScript('Wait for the long job.', [
  { toolCalls: [{ name: 'shell', input: { command: 'sleep 309.52' } }] },
  { text: 'never' },
]);
const model = scriptedProvider([
  { toolCalls: [{ name: 'shell', input: { command: 'echo begun; sleep 309.51', isBackground: true } }] },
  { toolCalls: [{ name: 'task', input: { description: 'long child', prompt: child } }] },
]);
const host = await createAgentHost({ dataDir, provider: model, env: {} });
const agent = await host.createAgent({ name: 'Crashing parent' });
process.stdout.write(`${JSON.stringify({ agentId: agent.id })}\n`);
await host.sendPrompt({ agentId: agent.id, prompt: 'start the work', clientNonce: 'crash-1' });
setInterval(() => undefined, 60_000);

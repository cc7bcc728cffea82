/**
 * Test helper (task-wakes.test.ts), run as its own process: a real box on the data dir in argv[2]
 * whose agent starts a background command and ends its turn; when the command ends and the wake's
 * input is about to be committed in the inbox (its second input), the box SIGKILLs itself.
 */
import { createAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { WritePoints } from '../stores/write-points.ts';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: test-wake-crash.ts <dataDir>');
let inputs = 0;
const writePoints = new WritePoints({
  fail: (store, what) => {
    if (store === 'inbox' && what === 'the input' && ++inputs === 2) process.kill(process.pid, 'SIGKILL');
    return null;
  },
});
const model = scriptedProvider([
  {
    toolCalls: [
      { name: 'shell', input: { command: 'sleep 0.3; echo crash-job-output', isBackground: true } },
    ],
  },
  { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Started.' } }] },
  {},
]);
const host = await createAgentHost({ dataDir, provider: model, env: {}, writePoints });
const agent = await host.createAgent({ name: 'Waking parent' });
process.stdout.write(`${JSON.stringify({ agentId: agent.id })}\n`);
await host.sendPrompt({ agentId: agent.id, prompt: 'start the job', clientNonce: 'wake-crash-1' });
setInterval(() => undefined, 60_000);

/**
 * A cluster worker in a process of its own (tests only), to be SIGKILLed mid-turn. Its scripted model
 * answers each turn from the conversation alone, so any worker continues any agent the same way:
 * the user's prompt gets one shell call (`echo <prompt> >> log.txt`, then `sleep <n>` when the prompt
 * is `slow <n>`; `printenv NAME >> log.txt` when it is `env NAME`), the shell's result one `send_message`, and that an empty step that ends the turn.
 * Run with `node --import tsx`; prints `ready` once it takes jobs.
 *
 *   cluster-worker-child.ts '{"databaseUrl": …, "objectStoreUrl": …, "credentials": …, "schema": …,
 *                             "keyHex": …, "dataDir": …, "name": …}'
 */
import type { ModelStepRequest } from '../providers/types.ts';
import { scriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { startClusterWorker } from '../cluster/worker.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as {
  databaseUrl: string;
  objectStoreUrl: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  schema: string;
  keyHex: string;
  dataDir: string;
  name: string;
};

/** The text of a user message, without the address tag and hidden-prompt wrappers. */
function lastUserText(request: ModelStepRequest): string {
  const user = request.messages.findLast((message) => message.role === 'user');
  if (!user) return '';
  const content = user.content;
  return typeof content === 'string'
    ? content
    : content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

function step(request: ModelStepRequest): ScriptedStep {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const result = last.content.find((part) => part.type === 'tool-result');
    if (result?.toolName === 'send_message') return {};
    return {
      toolCalls: [{ name: 'send_message', input: { type: 'text', content: `done by ${config.name}` } }],
    };
  }
  const text = lastUserText(request);
  // `env NAME`: the tools' environment holds the agent's secrets; the value goes to log.txt.
  const secret = /env ([A-Za-z_][A-Za-z0-9_]*)/.exec(text)?.[1];
  if (secret) return { toolCalls: [{ name: 'shell', input: { command: `printenv ${secret} >> log.txt` } }] };
  const prompt = /slow \d+/.exec(text)?.[0] ?? 'fast';
  const seconds = /^slow (\d+)$/.exec(prompt)?.[1];
  const command = `echo '${prompt}' >> log.txt${seconds ? ` && sleep ${seconds}.${process.pid % 97}` : ''}`;
  return { toolCalls: [{ name: 'shell', input: { command } }] };
}

const worker = await startClusterWorker({
  databaseUrl: config.databaseUrl,
  objectStoreUrl: config.objectStoreUrl,
  credentials: config.credentials,
  schema: config.schema,
  masterKey: Buffer.from(config.keyHex, 'hex'),
  dataDir: config.dataDir,
  env: {},
  provider: scriptedProvider(step),
  workerName: config.name,
  onTurnError: (agentId, error) => process.stderr.write(`turn of ${agentId}: ${(error as Error).message}\n`),
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});

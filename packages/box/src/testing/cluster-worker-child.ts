/**
 * A cluster worker in a process of its own (tests only), to be SIGKILLed mid-turn. Its scripted model
 * answers each turn from the conversation alone, so any worker continues any agent the same way:
 *
 * - a prompt `plan <label>` is a turn of four tool steps, chosen by how many calls of the turn have
 *   a result so far (an "interrupted" one counts): a shell call (`echo <label> s1 >> log.txt`, with
 *   `sleep 60` when the label ends in `slow`), `send_message` "part 1 of <label>", a second shell
 *   call, "part 2 of <label>", then an empty step that ends the turn;
 * - a prompt `env NAME` gets one shell call `printenv NAME >> log.txt` (the tools' environment holds
 *   the agent's secrets), the shell's result one `send_message`, and that an empty step;
 * - a prompt `bg <command>` gets one background shell call (`isBackground`), its result one
 *   `send_message`, and that an empty step;
 * - a prompt `retry once` has its first model call told as retried (`onRetry`, then 600 ms later
 *   answered: null) before it answers as any other prompt;
 * - a prompt `child <label>` gets one `task` call: a subagent whose script is two shell calls
 *   (`echo '<label> c1'`, then `sleep 1 && echo '<label> c2'`, `sleep 120` when the label ends in
 *   `slow`) and a closing text; its result one
 *   `send_message`, and that an empty step;
 * - a prompt `mcp <server> <tool> <text>` gets one `mcp` call of that tool with `{text}`, its result
 *   one `send_message` "mcp said: <the result's text>", and that an empty step;
 * - any other prompt gets one shell call (`echo <prompt> >> log.txt`, then `sleep <n>` when the
 *   prompt is `slow <n>`), the shell's result one `send_message`, and that an empty step.
 *
 * With `"gateway": true` it serves its own gateway on loopback (files too, as `sendbox serve` does) and prints `ready <url> <token>`,
 * else `ready`, once it takes jobs. While the file `<dataDir>/die-in-send-window` exists, it kills
 * itself (SIGKILL) inside the write window of its next send: after the send's ledger entry
 * committed, before its result reaches the transcript. Run with `node --import tsx`:
 *
 *   cluster-worker-child.ts '{"databaseUrl": …, "objectStoreUrl": …, "credentials": …, "schema": …,
 *                             "keyHex": …, "dataDir": …, "name": …, "gateway": true}'
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ModelProvider, ModelStepRequest } from '../providers/types.ts';
import { scriptedProvider, withScript, type ScriptedStep } from '../providers/scripted.ts';
import { startClusterWorker } from '../cluster/worker.ts';
import { agentFiles, boxAgentFolders } from '../gateway/files.ts';
import { makeWebRoot, startGatewayOn } from '../gateway/test-support.ts';
import { WritePoints } from '../stores/write-points.ts';
import type { WorkerProcessConfig } from './cluster-children.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;

/** The text of a user message, without the address tag and hidden-prompt wrappers. */
function lastUserText(request: ModelStepRequest): string {
  const user = request.messages.findLast((message) => message.role === 'user');
  if (!user) return '';
  const content = user.content;
  return typeof content === 'string'
    ? content
    : content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The text of the turn's user prompt (`[t<N>u]` tag dropped), and how many of its calls have results. */
function turnSoFar(request: ModelStepRequest): { prompt: string; results: number } {
  const textOf = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((part: { type?: string; text?: string }) => (part.type === 'text' ? part.text : ''))
            .join('\n')
        : '';
  const start = request.messages.findLastIndex(
    (message) => message.role === 'user' && /^\[t\d+u\]/.test(textOf(message.content)),
  );
  const prompt = start < 0 ? '' : textOf(request.messages[start]!.content).replace(/^\[t\d+u\]\n/, '');
  let results = 0;
  for (const message of request.messages.slice(start + 1))
    if (message.role === 'tool')
      results += message.content.filter((part) => part.type === 'tool-result').length;
  return { prompt, results };
}

function planStep(label: string, results: number): ScriptedStep {
  const shell = (n: number, sleep: string) => ({
    name: 'shell',
    input: { command: `echo '${label} s${n}' >> log.txt${sleep}` },
  });
  const send = (part: number) => ({
    name: 'send_message',
    input: { type: 'text', content: `part ${part} of ${label}` },
  });
  if (results === 0)
    return { toolCalls: [shell(1, label.endsWith('slow') ? ` && sleep 60.${process.pid % 97}` : '')] };
  if (results === 1) return { toolCalls: [send(1)] };
  if (results === 2) return { toolCalls: [shell(2, '')] };
  if (results === 3) return { toolCalls: [send(2)] };
  return {};
}

function step(request: ModelStepRequest): ScriptedStep {
  const turn = turnSoFar(request);
  const plan = /^plan (.+)$/.exec(turn.prompt.split('\n')[0] ?? '');
  if (plan) return planStep(plan[1]!, turn.results);
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const result = last.content.find((part) => part.type === 'tool-result');
    if (result?.toolName === 'send_message') return {};
    if (result?.toolName === 'mcp') {
      const said =
        result.output.type === 'text' || result.output.type === 'error-text' ? result.output.value : '';
      return { toolCalls: [{ name: 'send_message', input: { type: 'text', content: `mcp said: ${said}` } }] };
    }
    return {
      toolCalls: [{ name: 'send_message', input: { type: 'text', content: `done by ${config.name}` } }],
    };
  }
  const text = lastUserText(request);
  const background = /^bg (.+)$/m.exec(text);
  if (background)
    return { toolCalls: [{ name: 'shell', input: { command: background[1], isBackground: true } }] };
  const child = /^child (\S+)$/m.exec(text)?.[1];
  if (child) {
    const prompt = withScript(`Log ${child}.`, [
      { toolCalls: [{ name: 'shell', input: { command: `echo '${child} c1'` } }] },
      {
        toolCalls: [
          {
            name: 'shell',
            input: { command: `sleep ${child.endsWith('slow') ? 120 : 1} && echo '${child} c2'` },
          },
        ],
      },
      { text: `${child} logged` },
    ]);
    return { toolCalls: [{ name: 'task', input: { description: `log ${child}`, prompt } }] };
  }
  const mcp = /^mcp (\S+) (\S+) (.+)$/m.exec(text);
  if (mcp) {
    const [, server, toolName, said] = mcp;
    return { toolCalls: [{ name: 'mcp', input: { server, toolName, args: { text: said } } }] };
  }
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
  env: config.env ?? {},
  provider: retryingOnce(scriptedProvider((request) => namedCalls(step(request)))),
  workerName: config.name,
  writePoints: new WritePoints({ fail: sendWindowTrap(path.join(config.dataDir, 'die-in-send-window')) }),
  onTurnError: (agentId, error) => process.stderr.write(`turn of ${agentId}: ${(error as Error).message}\n`),
});
const gateway = config.gateway
  ? await startGatewayOn(worker.host, config.dataDir, {
      webRoot: await makeWebRoot(),
      shared: worker.shared,
      sessionFiles: worker.sessionFiles,
      files: agentFiles(worker.host, boxAgentFolders(config.dataDir)),
    })
  : undefined;
process.stdout.write(gateway ? `ready ${gateway.url} ${gateway.token}\n` : 'ready\n');
process.on('SIGTERM', () => {
  void (gateway?.close() ?? Promise.resolve()).then(() => worker.close()).then(() => process.exit(0));
});

let calls = 0;

/** Call ids unique across workers, as a real model's are (`<worker>-<n>`): an approval card's id is its call's. */
function namedCalls(step: ScriptedStep): ScriptedStep {
  if (!step.toolCalls) return step;
  return { ...step, toolCalls: step.toolCalls.map((call) => ({ ...call, id: `${config.name}-${++calls}` })) };
}

/** The scripted model, whose first call of a turn `retry once` is told as retried before it answers. */
function retryingOnce(scripted: ModelProvider): ModelProvider {
  return {
    ...scripted,
    async step(request) {
      const turn = turnSoFar(request);
      if (/^retry once$/m.test(turn.prompt) && turn.results === 0) {
        request.onRetry?.({ attempt: 2, attempts: 3, delayMs: 600, reason: 'HTTP 503' });
        await new Promise((resolve) => setTimeout(resolve, 600));
        request.onRetry?.(null);
      }
      return scripted.step(request);
    },
  };
}

/**
 * While `trigger` exists: a send's ledger write passes (it commits next), and at the next write (its
 * result in the transcript) the process dies, without a handler, as a crashed worker.
 */
function sendWindowTrap(trigger: string): (store: string, what: string) => null {
  let sent = false;
  return (store, what) => {
    if (sent) process.kill(process.pid, 'SIGKILL');
    if (store === 'ledger' && /^t\d+s\d+$/.test(what) && existsSync(trigger)) sent = true;
    return null;
  };
}

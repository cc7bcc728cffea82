/**
 * `txcript continue --with grok_bot` end to end against a real box: host and
 * gateway on an ephemeral loopback port over a temp data dir (scripted
 * model), a generated Simple session of 5,000 messages (text, Bash calls and
 * results), then:
 *
 * - the command in-process (`run(['continue', …])`, the function the CLI
 *   calls), several times;
 * - the command as a subprocess (`node bin/txcript.mjs continue …`), with
 *   `txcript --help` timed alongside to show the process start-up share;
 * - the split per phase of the mint (`mintGrokBotAgent`'s own timings:
 *   preflight + seed building, createAgent, unlock, ledger, jsonl, open),
 *   plus reading and parsing the document.
 *
 * Every run mints a new agent; the data dir is removed at the end.
 *
 *   npx tsx bench/continue-grok-bot.ts [messages=5000] [runs=5]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { agentFiles, boxAgentFolders, createAgentHost, scriptedProvider, startGateway } from '@sendbox/box';
import {
  commonToSimple,
  mintGrokBotAgent,
  renderSimple,
  simple,
  type MintPhase,
  type Message,
  type Transcript,
} from '@sendbox/txcript';
import { run } from '../packages/txcript/src/cli/program.ts';

const MESSAGES = Number(process.argv[2] ?? 5000);
const RUNS = Number(process.argv[3] ?? 5);
const bin = fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));

/** Turns of four messages: a prompt, a call, its result, a reply. */
function generate(count: number): Transcript {
  const start = Date.parse('2026-09-10T12:00:00Z');
  const at = (i: number) => new Date(start + i * 1000).toISOString();
  const messages: Message[] = [];
  for (let i = 0; messages.length < count; i++) {
    const turn: Message[] = [
      {
        role: 'user',
        content: [{ type: 'text', text: `Step ${i}: check the build and report.` }],
        timestamp: at(4 * i),
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: `Running the build for step ${i}.` },
          {
            type: 'tool_use',
            id: `call_${i}`,
            tool: { name: 'Bash', command: `npm run build -- --step ${i}` },
          },
        ],
        timestamp: at(4 * i + 1),
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `call_${i}`, content: `build ${i} ok\n`.repeat(5) }],
        timestamp: at(4 * i + 2),
      },
      {
        role: 'assistant',
        content: [{ type: 'text', text: `Step ${i} is done: the build passes and nothing else changed.` }],
        timestamp: at(4 * i + 3),
      },
    ];
    messages.push(...turn.slice(0, count - messages.length));
  }
  return { meta: { id: 'bench-run', timestamp: at(0), title: 'Continue benchmark' }, messages };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ms = (v: number) => `${v.toFixed(1).padStart(8)} ms`;

function spawnTxcript(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; ms: number; err: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, ms: performance.now() - started, err }));
  });
}

const dataDir = await mkdtemp(
  path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-continue-'),
);
const home = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-continue-home-'));
const host = await createAgentHost({ dataDir, provider: scriptedProvider([]), env: {} });
const gateway = await startGateway({
  host,
  files: agentFiles(host, boxAgentFolders(dataDir)),
  dataDir,
  webRoot: path.join(dataDir, 'no-web'),
  version: 'bench',
  port: 0,
});
try {
  await host.createAgent({ name: 'Existing agent' });
  const env: Record<string, string> = {
    HOME: home,
    PATH: process.env.PATH ?? '',
    NO_COLOR: '1',
    TXCRIPT_GROK_BOT_AGENTS: path.join(dataDir, 'agents'),
    TXCRIPT_GROK_BOT_ROOT: path.join(dataDir, 'agent-transcripts'),
    TXCRIPT_GROK_BOT_GATEWAY: gateway.url,
    TXCRIPT_GROK_BOT_TOKEN: gateway.token,
  };
  const transcript = generate(MESSAGES);
  const doc = path.join(home, 'run.json');
  const text = renderSimple(commonToSimple(transcript));
  await writeFile(doc, text);
  console.log(
    `continue --with grok_bot: ${MESSAGES} messages, Simple document ${(text.length / 1e6).toFixed(2)} MB, ${RUNS} runs each`,
  );

  // In-process: the command's own function, output discarded.
  const inProcess: number[] = [];
  let entries = '';
  for (let i = 0; i < RUNS; i++) {
    let out = '';
    let err = '';
    const started = performance.now();
    const code = await run(['continue', doc, '--with', 'grok_bot'], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      readStdin: () => Promise.resolve(''),
      env,
      now: () => new Date(),
    });
    inProcess.push(performance.now() - started);
    if (code !== 0) throw new Error(`continue failed (exit ${code}): ${err}`);
    entries = /entries: (\d+)/.exec(out)?.[1] ?? '?';
  }
  console.log(
    `in-process  continue           median ${ms(median(inProcess))}  (runs: ${inProcess.map((v) => v.toFixed(0)).join(', ')} ms; ${entries} ledger entries)`,
  );

  // Subprocess: what a user waits for, process start-up included.
  const sub: number[] = [];
  const help: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 3); i++) {
    const r = await spawnTxcript(['continue', doc, '--with', 'grok_bot'], env);
    if (r.code !== 0) throw new Error(`subprocess continue failed (exit ${r.code}): ${r.err}`);
    sub.push(r.ms);
    help.push((await spawnTxcript(['--help'], env)).ms);
  }
  console.log(
    `subprocess  continue           median ${ms(median(sub))}  (runs: ${sub.map((v) => v.toFixed(0)).join(', ')} ms)`,
  );
  console.log(`subprocess  txcript --help     median ${ms(median(help))}  (process + tsx start-up alone)`);

  // The split: reading the document, then each phase of the mint.
  const phases: Record<MintPhase | 'read+parse', number[]> = {
    'read+parse': [],
    preflight: [],
    create: [],
    unlock: [],
    ledger: [],
    jsonl: [],
    open: [],
  };
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const parsed = simple.text.parse(await readFile(doc, 'utf8'), doc);
    const common = simple.codec.toCommon(parsed.records, { sessionId: 'run' });
    phases['read+parse'].push(performance.now() - started);
    const result = await mintGrokBotAgent(common, { env });
    for (const [phase, value] of Object.entries(result.phaseMs)) phases[phase as MintPhase].push(value);
  }
  const notes: Record<string, string> = {
    'read+parse': 'read the file, Simple text codec, Simple -> Common',
    preflight: 'roots, Common -> ledger entries + validation, gateway config',
    create: 'POST createAgent',
    unlock: 'POST listAgents + openAgent on another agent',
    ledger: 'transcript_entries + kv in one SQLite transaction',
    jsonl: 'Common -> grok_bot JSONL, atomic write',
    open: 'POST openAgent on the new agent (the box re-reads ledger and JSONL)',
  };
  console.log('per phase (median):');
  for (const [phase, values] of Object.entries(phases)) {
    console.log(`  ${phase.padEnd(11)} ${ms(median(values))}  ${notes[phase]}`);
  }
} finally {
  await gateway.close();
  await host.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
}

/**
 * The crash harness: the real box (`sendbox serve`, a separate process)
 * against a scripted model (an OpenAI-compatible server on loopback), killed
 * with SIGKILL at its k-th durable write (`SENDBOX_TEST_CRASH_AT_WRITE=k`) in
 * round after round on one data dir, k spread over the writes of a start-up
 * recovery, three accepted prompts, their turns and an upload. Each restart
 * recovers the last crash; once it is idle the files must hold:
 *
 * - every accepted input (2xx) answered, pending or failed, none lost;
 * - the JSONL parses, line by line; store.db passes `integrity_check`;
 * - the ledger and the JSONL agree: the same user turns, the same delivered
 *   sends, every turn ended; every tool call has a result;
 * - no temp file is left;
 * - and at the end the agent still answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentPaths } from '../src/stores/files/layout.ts';
import type { RosterRow } from '../src/host/types.ts';
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type ScriptedReply,
} from '../src/testing/openai-server.ts';

const BIN = fileURLToPath(new URL('../bin/sendbox.mjs', import.meta.url));
const ROUNDS = 50;
/** Write k of a round: spread over recovery (a few writes), three prompts' turns (~12 each) and an upload. */
const crashPoint = (round: number): number => 1 + ((round * 23) % 44);

interface Box {
  child: ChildProcess;
  stdout: () => string;
  exited: Promise<void>;
}

function startBox(home: string, modelUrl: string, crashAt?: number): Box {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (/^(XAI_|OPENAI_|SENDBOX_)/.test(key)) delete env[key];
  Object.assign(env, {
    OPENAI_BASE_URL: modelUrl,
    SENDBOX_MODEL: 'scripted',
    SENDBOX_MODEL_MAX_RETRIES: '0',
  });
  if (crashAt !== undefined) env.SENDBOX_TEST_CRASH_AT_WRITE = String(crashAt);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-build'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, stdout: () => stdout, exited };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The address once the box listens, or null when it died first (killed during its recovery). */
async function running(box: Box): Promise<string | null> {
  let dead = false;
  void box.exited.then(() => (dead = true));
  for (;;) {
    const match = /running at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(box.stdout());
    if (match) return match[1]!;
    if (dead) return null;
    await sleep(10);
  }
}

type Call = (method: string, body?: unknown) => Promise<unknown>;

function client(url: string, dataDir: string): Call {
  const { token } = JSON.parse(fs.readFileSync(path.join(dataDir, 'gateway.json'), 'utf8')) as {
    token: string;
  };
  return async (method, body = {}) => {
    const response = await fetch(new URL(`api/${method}`, url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    if (response.status !== 200)
      throw new Error(`${method}: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as unknown;
  };
}

/** Resolves true once the agent is idle with nothing pending, false when the box died first. */
async function idle(call: Call, box: Box, agentId: string | null): Promise<boolean> {
  let dead = false;
  void box.exited.then(() => (dead = true));
  for (;;) {
    if (dead) return false;
    try {
      const rows = (await call('listAgents')) as RosterRow[];
      const row = rows.find((r) => r.id === agentId);
      if (!row || (row.state === 'idle' && row.pendingInputs === 0)) return true;
    } catch {
      // The box is going down.
    }
    await sleep(20);
  }
}

/** A model that always answers: a user turn gets a todo update and a send; a delivered send gets "done". */
function scriptedModel(server: OpenAiTestServer): void {
  let calls = 0;
  server.respondWith((body): ScriptedReply => {
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const delivered = messages
      .slice(-3)
      .some((m) => m.role === 'tool' && String(m.content).includes('Message sent'));
    if (delivered && messages.at(-1)?.role === 'tool') return { kind: 'message', content: 'done' };
    calls += 1;
    return {
      kind: 'message',
      toolCalls: [
        {
          id: `c${calls}a`,
          name: 'update_todos',
          arguments: JSON.stringify({ todos: [{ id: '1', content: 'answer', status: 'in_progress' }] }),
        },
        {
          id: `c${calls}b`,
          name: 'send_message',
          arguments: JSON.stringify({ type: 'text', content: `reply ${calls}` }),
        },
      ],
    };
  });
}

interface Ledger {
  rows: Array<{ id: string; entry: Record<string, unknown> }>;
  inbox: Array<{ nonce: string; state: string }>;
  integrity: string;
}

function readStore(file: string): Ledger {
  const db = new Database(file, { readonly: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true }) as string;
    const rows = (
      db.prepare('SELECT id, entry FROM transcript_entries ORDER BY seq').all() as Array<{
        id: string;
        entry: string;
      }>
    ).map((row) => ({ id: row.id, entry: JSON.parse(row.entry) as Record<string, unknown> }));
    const inbox = db.prepare('SELECT nonce, state FROM sendbox_inbox ORDER BY seq').all() as Ledger['inbox'];
    return { rows, inbox, integrity };
  } finally {
    db.close();
  }
}

function tempFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/^\.ingest-.*\.tmp$|^\..+\.[0-9a-f]{12}\.tmp$/.test(entry.name)) found.push(full);
    }
  };
  walk(dir);
  return found;
}

/** The invariants, on the files of an idle box. */
function checkFiles(dataDir: string, agentId: string, accepted: ReadonlySet<string>, label: string): void {
  const paths = agentPaths(dataDir, agentId);
  const store = readStore(paths.storeDb);
  expect(store.integrity, label).toBe('ok');
  const text = fs.existsSync(paths.jsonl) ? fs.readFileSync(paths.jsonl, 'utf8') : '';
  const lines = text.split('\n');
  expect(lines.at(-1), `${label}: the JSONL ends with a newline`).toBe('');
  const records = lines.slice(0, -1).map((line, i) => {
    try {
      return JSON.parse(line) as { role: string; message: { content: Array<Record<string, unknown>> } };
    } catch {
      throw new Error(`${label}: JSONL line ${i + 1} does not parse: ${line.slice(0, 120)}`);
    }
  });

  const ledgerUsers = store.rows.filter((r) => /^t\d+u$/.test(r.id)).map((r) => r.id);
  const jsonlUsers = records.flatMap((r) => {
    const first = r.role === 'user' ? r.message.content[0] : undefined;
    const match = typeof first?.text === 'string' ? /^\[(t\d+u)\]/.exec(first.text) : null;
    return match ? [match[1]!] : [];
  });
  expect(jsonlUsers, `${label}: the same user turns in the JSONL as in the ledger`).toEqual(ledgerUsers);
  const ids = new Set(store.rows.map((r) => r.id));
  for (const user of ledgerUsers)
    expect(ids.has(user.replace(/u$/, 'e')), `${label}: ${user} ended`).toBe(true);

  const ledgerSends = store.rows.filter((r) => r.entry.kind === 'send-message').map((r) => r.id);
  const open: string[] = [];
  const jsonlSends: string[] = [];
  for (const record of records) {
    for (const block of record.message.content) {
      if (block.type === 'tool_use') open.push(String(block.name));
      if (block.type === 'tool_result') {
        const at = open.indexOf(String(block.name));
        expect(at, `${label}: a result without a call`).toBeGreaterThanOrEqual(0);
        open.splice(at, 1);
        const success = (block.result as { success?: { messageId?: string } } | undefined)?.success;
        if (success?.messageId) jsonlSends.push(success.messageId);
      }
    }
  }
  expect(open, `${label}: every tool call has a result`).toEqual([]);
  expect(jsonlSends, `${label}: the same delivered sends in the JSONL as in the ledger`).toEqual(ledgerSends);

  const answered = new Set(store.rows.map((r) => r.entry.clientNonce).filter((n) => typeof n === 'string'));
  const failed = new Set(store.inbox.filter((row) => row.state === 'failed').map((row) => row.nonce));
  for (const nonce of accepted) {
    expect(
      answered.has(nonce) || failed.has(nonce),
      `${label}: accepted input ${nonce} is answered or failed`,
    ).toBe(true);
  }
  expect(
    store.inbox.filter((row) => row.state === 'pending'),
    `${label}: nothing pending when idle`,
  ).toEqual([]);
  expect(tempFiles(dataDir), `${label}: no temp file left`).toEqual([]);
}

let server: OpenAiTestServer;
let home: string;
beforeAll(async () => {
  server = await startOpenAiTestServer();
  scriptedModel(server);
  home = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-crash-'));
});
afterAll(async () => {
  await server.close();
  await fs.promises.rm(home, { recursive: true, force: true });
});

describe('the crash harness', () => {
  it(`survives SIGKILL at ${ROUNDS} write points: nothing accepted is lost, the stores agree, the agent goes on`, async () => {
    const dataDir = path.join(home, 'agent-data');
    const accepted = new Set<string>();
    let agentId: string | null = null;
    let kills = 0;
    let checks = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      const last = round === ROUNDS;
      const box = startBox(home, server.baseURL, last ? undefined : crashPoint(round));
      try {
        const url = await running(box);
        if (url === null) {
          kills += 1; // killed during the recovery of the last crash
          continue;
        }
        const call = client(url, dataDir);
        if (!(await idle(call, box, agentId))) {
          kills += 1;
          continue;
        }
        if (agentId === null)
          agentId = ((await call('createAgent', { name: 'Crash test' })) as { agent: RosterRow }).agent.id;
        checkFiles(
          dataDir,
          agentId,
          accepted,
          `round ${round} (after crash at write ${crashPoint(round - 1)})`,
        );
        checks += 1;
        if (last) break;
        try {
          for (let i = 0; i < 3; i++) {
            const nonce = `r${round}p${i}`;
            await call('sendPrompt', { agentId, prompt: `prompt ${nonce}`, clientNonce: nonce });
            accepted.add(nonce);
          }
          if (round % 4 === 1) {
            const { token } = JSON.parse(fs.readFileSync(path.join(dataDir, 'gateway.json'), 'utf8')) as {
              token: string;
            };
            await fetch(new URL('api/uploadFile', url), {
              method: 'POST',
              headers: {
                Authorization: `Bearer ${token}`,
                'X-Agent-Id': agentId,
                'X-File-Name': `notes-${round}.txt`,
                'X-Client-Nonce': `r${round}u`,
              },
              body: `upload of round ${round}`,
            });
          }
        } catch {
          // The box killed itself during a request: that input was not accepted (no 2xx).
        }
        // Its crash point, or, if the round's writes end before it, a kill between turns.
        if (await idle(call, box, agentId)) box.child.kill('SIGKILL');
        kills += 1;
      } finally {
        if (box.child.exitCode === null && box.child.signalCode === null) box.child.kill('SIGKILL');
        await box.exited;
      }
    }
    expect(kills).toBeGreaterThanOrEqual(ROUNDS);
    expect(checks).toBeGreaterThan(ROUNDS / 2);
    expect(accepted.size).toBeGreaterThan(ROUNDS);

    // The agent goes on: one more prompt, answered.
    const box = startBox(home, server.baseURL);
    try {
      const call = client((await running(box))!, dataDir);
      await call('sendPrompt', { agentId, prompt: 'still there?', clientNonce: 'final' });
      accepted.add('final');
      expect(await idle(call, box, agentId)).toBe(true);
      checkFiles(dataDir, agentId!, accepted, 'final');
      const { entries } = (await call('openAgent', { id: agentId })) as {
        entries: Array<{ kind: string; id: string }>;
      };
      const finalTurn = entries
        .filter((e) => e.kind === 'message')
        .at(-1)!
        .id.replace(/u$/, '');
      expect(entries.some((e) => e.kind === 'send-message' && e.id.startsWith(`${finalTurn}s`))).toBe(true);
    } finally {
      box.child.kill('SIGTERM');
      await box.exited;
    }
  }, 240_000);
});

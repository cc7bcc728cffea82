/**
 * The failover test at the size issue 25 states, over a real PostgreSQL and Ceph RGW: three worker
 * processes, each with its own gateway; 20 agents × 5 prompts sent round-robin through the three
 * gateways, one in ten sent again with the same nonce through another; each turn two shell calls and
 * two sends. One worker is SIGKILLed while it has a shell call open, later another inside a send's
 * write window (its send committed, its result not yet in the transcript). Then:
 *
 * 1. every nonce answered 2xx is one user entry, in accept order per agent;
 * 2. every cut turn ends, written by another worker (a later lease epoch), with model steps after
 *    the cut, and the model told once that it moved;
 * 3. no send id repeats, and no turn delivers a message twice;
 * 4. no row (ledger or transcript) comes from a superseded epoch;
 * 5. the crash harness's invariants hold on the rows and on `sendbox export`'s output read back
 *    through txcript;
 * 6. an SSE client on a gateway that runs no turn (a fourth process's, here the test's) gets every
 *    entry of the agents it watches once, in order;
 * 7. an attachment uploaded through a gateway whose worker was later SIGKILLed is served whole (its
 *    SHA-256) by the other gateways;
 * 8. a file written in turn k is there in turn k+1 after the agent moved: the slow agent's
 *    `log.txt`, appended to by every turn's shell calls, holds turn 0's lines and then the later
 *    turns' lines in order on the worker that ran its last turn.
 *
 * Its set-up (schema, observer, worker processes, what a timed-out wait prints) is failover-harness.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { grokBot, readLedgerFile, type JsonObject } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { TURN_RESUMED_NOTE } from '../agent/turn-resume.ts';
import { BOX_STOPPED_NOTICE } from '../agent/turn-texts.ts';
import { agentFiles, boxAgentFolders } from '../gateway/files.ts';
import { makeWebRoot, SseReader, startGatewayOn } from '../gateway/test-support.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { WorkerProcess } from '../testing/cluster-children.ts';
import { ledgerRows, transcriptRows, type LedgerRow } from '../testing/cluster-rows.ts';
import { crashInvariantBreaks } from '../testing/crash-invariants.ts';
import { until } from '../testing/processes.ts';
import { exportCluster } from './export.ts';
import { alive, startFailoverCluster } from './failover-harness.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();
const AGENTS = 20;
const PROMPTS = 5;
/** The prompt whose first shell call runs for a minute: its worker is killed while it is open. */
const SLOW = { agent: 0, prompt: 1 };
/** Agents whose entries an SSE client reads (the slow one among them). */
const WATCHED = [0, 7, 13];
/** The note's first words, as they stand in a record's JSON. */
const RESUMED = TURN_RESUMED_NOTE.split('\n')[1]!.slice(0, 40);

const recordsOf = (jsonl: string): JsonObject[] =>
  grokBot.text
    .parse(jsonl, 'transcript')
    .records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));

describe('failover at full size', () => {
  const kit = useClusterKit(services);

  it('3 workers, 20 agents × 5 prompts, two workers killed: nothing lost, doubled or written late; cut turns go on', async () => {
    const cluster = await startFailoverCluster(services(), 'failover-full');
    kit.defer(() => cluster.close());
    // The test's own gateway: it runs no turn; the SSE client reads it, the rows are read through it.
    const observer = cluster.observer;
    const http = await startGatewayOn(observer.host, await cluster.dir('observer-http'), {
      webRoot: await makeWebRoot(),
      files: agentFiles(observer.host, boxAgentFolders(cluster.observerDir)),
    });
    kit.defer(() => http.close());
    const workers: WorkerProcess[] = await Promise.all(
      ['worker-a', 'worker-b', 'worker-c'].map((name) => cluster.startWorker(name, { gateway: true })),
    );

    const agents: string[] = [];
    for (let i = 0; i < AGENTS; i++)
      agents.push((await observer.host.createAgent({ name: `Agent ${i}` })).id);

    // The SSE clients, before any prompt.
    const streams = await Promise.all(
      WATCHED.map(async (index) => {
        const response = await fetch(new URL(`api/events?agentId=${agents[index]!}`, http.url), {
          headers: { Authorization: `Bearer ${http.token}` },
        });
        expect(response.status).toBe(200);
        return new SseReader(response);
      }),
    );
    kit.defer(async () => {
      for (const stream of streams) await stream.cancel().catch(() => undefined);
    });

    // Round-robin through the gateways; a request a dead gateway cannot answer goes to the next one.
    // `cut`: an earlier try died with its gateway, which may have committed the input before it died
    // (then the next gateway rightly answers that it is a duplicate).
    const accepted = new Map<string, string[]>(agents.map((id) => [id, []]));
    let turn = 0;
    const send = async (agentId: string, nonce: string, prompt: string, from: number) => {
      let cut = false;
      for (let i = 0; i < workers.length * 2; i++) {
        const worker = workers[(from + i) % workers.length]!;
        if (!alive(worker)) continue;
        try {
          const response = await fetch(new URL('api/sendPrompt', worker.url), {
            method: 'POST',
            headers: { Authorization: `Bearer ${worker.token!}` },
            body: JSON.stringify({ agentId, prompt, clientNonce: nonce }),
          });
          if (response.status !== 200) {
            // A gateway dying after its commit may answer 5xx for an input it took.
            if (response.status >= 500) cut = true;
            continue;
          }
          return { ...((await response.json()) as { accepted: true; duplicate: boolean }), cut };
        } catch {
          // The gateway died meanwhile.
          cut = true;
        }
      }
      throw new Error(`no gateway accepted ${nonce}`);
    };
    const sendWave = async (prompts: readonly number[]) => {
      for (const p of prompts) {
        for (const [a, agentId] of agents.entries()) {
          const nonce = `a${a}p${p}`;
          const slow = a === SLOW.agent && p === SLOW.prompt ? ' slow' : '';
          const from = turn++;
          const first = await send(agentId, nonce, `plan ${nonce}${slow}`, from);
          if (!first.cut) expect(first.duplicate, nonce).toBe(false);
          accepted.get(agentId)!.push(nonce);
          if (from % 10 === 3) {
            // Sent again with the same nonce through another gateway: accepted, once.
            expect((await send(agentId, nonce, `plan ${nonce}${slow}`, from + 1)).duplicate, nonce).toBe(
              true,
            );
          }
        }
      }
    };
    await sendWave([0, 1, 2]);

    // 7. An attachment uploaded through each gateway (to an agent no prompt goes to), fetched after
    // the kills through gateways that did not accept it.
    const attachmentAgent = (await observer.host.createAgent({ name: 'Attachments' })).id;
    // One after another: two gateways taking uploads of one agent at once give them the same entry id.
    const uploads: Array<{ worker: WorkerProcess; sha256: string }> = [];
    for (const [i, worker] of workers.entries()) {
      const bytes = randomBytes(300_000 + i);
      const response = await fetch(new URL('api/uploadFile', worker.url), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${worker.token!}`,
          'X-Agent-Id': attachmentAgent,
          'X-File-Name': `photo-${i}.png`,
          'X-Client-Nonce': `upload-${i}`,
        },
        body: bytes,
      });
      expect([response.status, await response.text()], `upload through ${worker.name}`).toEqual([
        200,
        expect.stringContaining('"id"'),
      ]);
      uploads.push({ worker, sha256: createHash('sha256').update(bytes).digest('hex') });
    }

    // Kill 1: the worker whose shell call of the slow prompt is open.
    const slowAgent = agents[SLOW.agent]!;
    const slowLabel = `a${SLOW.agent}p${SLOW.prompt} slow s1`;
    const runsSlow = (worker: WorkerProcess) => {
      const log = path.join(agentPaths(worker.dataDir, slowAgent).sandbox, 'log.txt');
      return existsSync(log) && readFileSync(log, 'utf8').includes(slowLabel);
    };
    await cluster.until(
      () => workers.some(runsSlow),
      'a worker to open the slow shell call',
      90_000,
      slowAgent,
    );
    const first = workers.find(runsSlow)!;
    const epochAtKill = (await observer.leases.holder(slowAgent))!.epoch;
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await cluster.until(
      async () => (await ledgerRows(observer.db, slowAgent)).some((row) => (row.epoch ?? 0) > epochAtKill),
      'another worker to write the slow agent’s first row',
      60_000,
      slowAgent,
    );
    const failoverMs = Date.now() - killedAt;

    // Kill 2: a survivor dies inside the write window of its next send.
    const second = workers.find((worker) => worker !== first)!;
    writeFileSync(path.join(second.dataDir, 'die-in-send-window'), '');
    await sendWave([3, 4]);
    await cluster.until(
      () => !alive(second),
      'the second worker to die in a send’s write window',
      60_000,
      slowAgent,
    );

    // Every turn ends on the last worker.
    let unfinished = agents[0]!;
    const ended = async () => {
      for (const agentId of agents) {
        const ids = new Set((await ledgerRows(observer.db, agentId)).map((row) => row.id));
        unfinished = agentId;
        for (let t = 0; t < PROMPTS; t++) if (!ids.has(`t${t}e`)) return false;
      }
      return true;
    };
    await until(ended, 'every turn to end', 120_000).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\n${await cluster.explain(unfinished)}`);
    });

    let cutTurns = 0;
    const out = await cluster.dir('export');
    await exportCluster(observer.db, out);
    for (const [a, agentId] of agents.entries()) {
      const ledger = await ledgerRows(observer.db, agentId);
      const transcript = await transcriptRows(observer.db, agentId);
      const label = `agent ${a}`;
      // 1. Every accepted nonce, once, in accept order.
      const users = ledger.filter((row) => row.entry.kind === 'message' && row.entry.role === 'user');
      expect(
        users.map((row) => row.entry.clientNonce),
        label,
      ).toEqual(accepted.get(agentId));
      // 2. Cut turns: ended under a later epoch, with model steps after the cut, the model told once.
      const records = recordsOf(transcript.map((row) => row.text).join(''));
      let cutHere = 0;
      for (let t = 0; t < PROMPTS; t++) {
        const rows = ledger.filter((row) => new RegExp(`^t${t}[a-z]`).test(row.id));
        const byId = (id: string) => rows.find((row) => row.id === id)!;
        const start = byId(`t${t}u`).epoch!;
        const end = byId(`t${t}e`).epoch!;
        if (end === start) continue;
        // Each worker that took the turn over wrote rows of it under its epoch, and one note.
        cutHere += new Set(rows.map((row) => row.epoch)).size - 1;
        expect(end, `${label} t${t}`).toBeGreaterThan(start);
        // Steps of any worker after the first cut: a turn can be cut twice (the second kill may hit the
        // worker that resumed it, after its last step), and then the last worker only ends it.
        const after = rows.filter((row) => row.epoch! > start && /^t\d+[acs]\d+$/.test(row.id));
        expect(after.length, `${label} t${t}: model steps after the cut`).toBeGreaterThan(0);
      }
      cutTurns += cutHere;
      const notes = records.filter((record) => JSON.stringify(record).includes(RESUMED));
      expect(notes.length, `${label}: one note per cut`).toBe(cutHere);
      expect(
        ledger.filter((row) => row.entry.text === BOX_STOPPED_NOTICE),
        label,
      ).toEqual([]);
      // 3. No send id repeats; each turn delivered its two parts once each.
      const sends = ledger.filter((row) => row.entry.kind === 'send-message');
      expect(new Set(sends.map((row) => row.id)).size, label).toBe(sends.length);
      for (const nonce of accepted.get(agentId)!) {
        const contents = sends
          .map((row) => (row.entry.message as { content?: string }).content ?? '')
          .filter((content) => content.endsWith(` of ${nonce}`) || content.includes(` of ${nonce} `));
        expect(contents.sort(), `${label} ${nonce}`).toEqual(
          [`part 1 of ${nonce}`, `part 2 of ${nonce}`].map((part) =>
            nonce === `a${SLOW.agent}p${SLOW.prompt}` ? `${part} slow` : part,
          ),
        );
      }
      // 4. No row from a superseded epoch.
      for (const rowsOf of [ledger, transcript] as Array<Array<{ seq: number; epoch: number | null }>>) {
        let highest = 0;
        for (const row of rowsOf) {
          if (row.epoch === null) continue;
          expect(row.epoch, `${label} seq ${row.seq}`).toBeGreaterThanOrEqual(highest);
          highest = row.epoch;
        }
      }
      // 5. The invariants on the rows, and on the export read back through txcript.
      expect(crashInvariantBreaks(entriesOf(ledger), records), label).toEqual([]);
      const paths = agentPaths(out, agentId);
      const exported = readLedgerFile(paths.storeDb);
      expect(exported.warnings, label).toEqual([]);
      expect(
        crashInvariantBreaks(
          exported.rows.map((row) => ({ id: row.id, kind: String(row.entry.kind) })),
          recordsOf(readFileSync(paths.jsonl, 'utf8')),
        ),
        label,
      ).toEqual([]);
    }
    // Both kills cut a turn: the slow one's, and the one in the send window.
    expect(cutTurns).toBeGreaterThanOrEqual(2);

    // 7. Each attachment, through the observer's gateway and a survivor's (never the accepting one).
    const survivor = workers.find(alive)!;
    expect(uploads.filter((upload) => !alive(upload.worker)).length).toBeGreaterThanOrEqual(2);
    for (const { worker, sha256 } of uploads) {
      for (const [url, token] of [
        [http.url, http.token],
        [survivor.url!, survivor.token!],
      ] as const) {
        if (url === worker.url) continue;
        const response = await fetch(
          new URL(`api/attachment?agentId=${attachmentAgent}&sha256=${sha256}`, url),
          {
            headers: { Authorization: `Bearer ${token}` },
          },
        );
        expect(response.status, `${worker.name}'s upload through ${url}`).toBe(200);
        const body = Buffer.from(await response.arrayBuffer());
        expect(createHash('sha256').update(body).digest('hex'), `${worker.name}'s upload`).toBe(sha256);
      }
    }

    // 8. A file written in turn k is there in turn k+1 after the agent moved: the slow agent's log,
    // on the worker that ran its last turn, starts with turn 0's lines (written before the move, in
    // its end-of-turn snapshot) and every line after them was appended in order by later turns. Lines
    // of a cut turn written before its cut may be lost with their worker (docs/cluster.md).
    const logOf = (worker: WorkerProcess) => {
      const log = path.join(agentPaths(worker.dataDir, slowAgent).sandbox, 'log.txt');
      return existsSync(log) ? readFileSync(log, 'utf8') : '';
    };
    const lastLine = `a${SLOW.agent}p${PROMPTS - 1} s2`;
    const last = workers.find((worker) => logOf(worker).split('\n').includes(lastLine));
    expect(last, `a worker whose log of agent ${SLOW.agent} ends with its last turn`).toBeDefined();
    const lines = logOf(last!).trimEnd().split('\n');
    const order = [...Array(PROMPTS).keys()].flatMap((p) =>
      [1, 2].map((n) => `a${SLOW.agent}p${p}${p === SLOW.prompt ? ' slow' : ''} s${n}`),
    );
    expect(lines.slice(0, 2)).toEqual(order.slice(0, 2));
    expect(lines).toEqual(order.filter((line) => lines.includes(line)));
    expect(lines.at(-1)).toBe(lastLine);

    // 6. The SSE client got every entry of its agents once, in order.
    for (const [i, index] of WATCHED.entries()) {
      const agentId = agents[index]!;
      const want = (await ledgerRows(observer.db, agentId)).map((row) => row.id);
      const got: string[] = [];
      while (got.length < want.length) {
        const event = await Promise.race([
          streams[i]!.next(),
          new Promise<'quiet'>((resolve) => setTimeout(() => resolve('quiet'), 30_000).unref()),
        ]);
        if (event === 'quiet' || event === null) break;
        if (event.event === 'entry') got.push((event.data as SequencedEntry).id);
      }
      expect(got, `SSE of agent ${index}`).toEqual(want);
    }

    console.log(
      `failover at full size: kill -> first row by the new worker ${(failoverMs / 1000).toFixed(1)} s; ${cutTurns} cut turns went on`,
    );
  }, 300_000);
});

function entriesOf(rows: readonly LedgerRow[]): Array<{ id: string; kind: string }> {
  return rows.map((row) => ({ id: row.id, kind: String(row.entry.kind) }));
}

/**
 * Every agent's sessions on every worker (cluster/layout-mirror.ts) over a real PostgreSQL: what a
 * turn in one worker process wrote is found by the sidebar's message search through a gateway that
 * runs no turn, and read by the `sessions` connector (`txcript mcp`, through the real MCP SDK) there;
 * a later turn is appended to the copy, not written whole again; a deleted agent leaves the copy.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import type { MessageHit } from '../search/message-search.ts';
import { sessionsServerConfig } from '../mcp/sessions-server.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { until } from '../testing/processes.ts';
import type { RunningGateway } from '../gateway/server.ts';

const services = useServices();

async function search(http: RunningGateway, query: string): Promise<MessageHit[]> {
  const response = await fetch(new URL('api/searchMessages', http.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${http.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { hits: MessageHit[] }).hits;
}

/** Waits until the agent's ledger holds `sends` send-message entries (its turns ended on the worker). */
async function sendsIn(db: Database, agentId: string, sends: number): Promise<void> {
  await until(
    async () => {
      const { rows } = await db.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${db.table('ledger')} WHERE agent_id = $1 AND entry LIKE '%"kind":"send-message"%'`,
        [agentId],
      );
      return Number(rows[0]!.n) >= sends;
    },
    `${sends} send(s) of agent ${agentId}`,
    60_000,
  );
}

async function transcriptRows(db: Database, agentId: string): Promise<string> {
  const { rows } = await db.pool.query<{ text: string }>(
    `SELECT text FROM ${db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return rows.map((row) => row.text).join('');
}

describe("every agent's sessions on every worker", () => {
  const kit = useClusterKit(services);

  it('the message search through a gateway that runs no turn finds what a turn on another worker wrote, kept current by appends', async () => {
    const cluster = await kit.cluster();
    const { worker: gateway, http } = await cluster.acceptingGateway();
    await cluster.workerProcess('worker');
    const agent = await gateway.host.createAgent({ name: 'Far away' });

    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'fast quokka', clientNonce: 'q1' });
    await sendsIn(cluster.db, agent.id, 1);
    const first = await search(http, 'quokka');
    expect(first).toEqual([expect.objectContaining({ agentId: agent.id, kind: 'user', title: 'Far away' })]);
    // What the worker said (in the worker process) too.
    expect(await search(http, '"done by worker"')).toEqual([
      expect.objectContaining({ agentId: agent.id, kind: 'assistant' }),
    ]);

    // The copy is the rows' file, byte for byte.
    const jsonl = agentPaths(path.dirname(gateway.sessionFiles.transcripts), agent.id).jsonl;
    expect(await readFile(jsonl, 'utf8')).toBe(await transcriptRows(cluster.db, agent.id));
    const before = await stat(jsonl);

    // A later turn: found at the next query, appended to the same file.
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'fast wombat', clientNonce: 'q2' });
    await sendsIn(cluster.db, agent.id, 2);
    expect(await search(http, 'wombat')).toEqual([
      expect.objectContaining({ agentId: agent.id, kind: 'user' }),
    ]);
    expect(await readFile(jsonl, 'utf8')).toBe(await transcriptRows(cluster.db, agent.id));
    const after = await stat(jsonl);
    expect(after.ino).toBe(before.ino);
    expect(after.size).toBeGreaterThan(before.size);

    // An agent with no turn yet (made through another gateway's host) is found by its name, as on files.
    const quiet = await cluster.acceptingGateway({ name: 'other' });
    const newcomer = await quiet.worker.host.createAgent({ name: 'Quiet newcomer' });
    await until(
      async () =>
        (await search(http, 'newcomer')).some((hit) => hit.agentId === newcomer.id && hit.kind === 'title'),
      'the new agent found by its name',
      15_000,
    );

    // Deleted through the gateway: gone from the copy and from the search.
    // (Refused while the worker still holds the agent's lease after its turn.)
    await until(
      () =>
        gateway.host.deleteAgent(agent.id).then(
          () => true,
          () => false,
        ),
      'the agent deleted',
      30_000,
    );
    expect(await search(http, 'quokka')).toEqual([]);
    await expect(stat(jsonl)).rejects.toThrow();
  }, 180_000);

  it('the `sessions` connector on a worker that ran no turn reads the sessions of turns run elsewhere', async () => {
    const cluster = await kit.cluster();
    const { worker: gateway, dataDir } = await cluster.acceptingGateway();
    await cluster.workerProcess('worker');
    const agent = await gateway.host.createAgent({ name: 'Elsewhere' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'fast pangolin', clientNonce: 'p1' });
    await sendsIn(cluster.db, agent.id, 1);
    await gateway.sessionFiles.settle();

    const home = await mkdtemp(path.join(os.tmpdir(), 'sendbox-home-'));
    kit.defer(() => rm(home, { recursive: true, force: true }));
    const config = await sessionsServerConfig(
      { kind: 'builtin', builtin: 'sessions' },
      {
        dataDir,
        hostHome: home,
        boxTranscripts: gateway.sessionFiles.transcripts,
        serverHome: home,
      },
    );
    // The server as its launch says (without the confinement, which stdio-launch.ts adds).
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: { ...config.env, PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sessions-test', version: '0.0.0' });
    await client.connect(transport);
    kit.defer(() => client.close());
    const result = await client.callTool({ name: 'search_sessions', arguments: { query: 'pangolin' } });
    const text = JSON.stringify(result.content);
    expect(text).toContain(agent.id);
    // Bound read-only when confined, as the other roots.
    expect(config.readOnly).toContain(gateway.sessionFiles.transcripts);
  }, 180_000);
});

/**
 * MCP connectors in a cluster (issue 25): the servers (mcp.json's document), their OAuth tokens and
 * each agent's profile rules are the cluster's, not a worker's. A connector added and signed in
 * through one gateway (a worker that runs no turn) is used by a turn on another worker process;
 * the tokens are sealed in PostgreSQL and in no file, row text or output; an approval rule saved
 * in the cluster puts a card before that call on the other worker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../mcp/testing/http-servers.ts';
import { everyFile } from '../mcp/testing/remote-box.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { setApprovalRules } from '../testing/cluster-rows.ts';
import { until } from '../testing/processes.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();

type Entry = SequencedEntry & Record<string, unknown>;

describe('MCP connectors across workers', () => {
  const kit = useClusterKit(services);

  it('uses a server added and signed in through one gateway in a turn on another worker process, its tokens sealed in PostgreSQL', async () => {
    const cluster = await kit.cluster();
    const { db } = cluster;
    const server = await startHttpServer('oauth');
    kit.defer(() => server.stop());

    const logged: string[] = [];
    const {
      worker: front,
      http: gateway,
      dataDir: gatewayDir,
    } = await cluster.acceptingGateway({ mcp: { log: (line) => logged.push(line) } });
    const worker = await cluster.workerProcess('worker');
    const workerDir = worker.dataDir;

    // Added through the gateway's settings panel, and signed in there (the callback lands on it).
    const entry = { url: server.url, allowPrivateHost: true };
    await front.host.mcpSettings.set('secure', entry);
    const started = await front.host.mcp.beginConnect(
      undefined,
      'secure',
      new URL('/oauth/mcp/callback', gateway.url).href,
    );
    expect('authorizationUrl' in started).toBe(true);
    const landed = await fetch((started as { authorizationUrl: string }).authorizationUrl);
    expect(await landed.text()).toContain('Connected secure');

    // A turn on the worker process calls it with the tokens the gateway got.
    const agent = await front.host.createAgent({ name: 'Connector user' });
    const sends = async () =>
      (await front.host.entriesAfter(agent.id, 0)).flatMap((e) =>
        e.kind === 'send-message' ? [String(((e as Entry).message as { content?: unknown }).content)] : [],
      );
    const sent = async (n: number) => {
      await until(async () => (await sends()).length >= n, `send ${n} from the worker process`, 60_000).catch(
        async (error: unknown) => {
          const seen = JSON.stringify(await front.host.entriesAfter(agent.id, 0));
          throw new Error(
            `${(error as Error).message}; entries ${seen}; the worker said:\n${worker.output()}`,
          );
        },
      );
      return (await sends())[n - 1];
    };
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'mcp secure echo one', clientNonce: 'n1' });
    expect(await sent(1)).toBe('mcp said: oauth echo: one');

    // The worker's data dir holds no mcp.json and no token file: both are the cluster's.
    expect(fs.existsSync(path.join(workerDir, 'mcp.json'))).toBe(false);
    expect(fs.existsSync(path.join(workerDir, 'mcp-oauth.enc'))).toBe(false);
    expect(fs.existsSync(path.join(gatewayDir, 'mcp.json'))).toBe(false);
    const view = await front.host.mcpSettings.view();
    expect(view.file).toBe(`PostgreSQL ${db.table('mcp_config')}`);
    expect(view.servers.map((row) => [row.name, row.signIn])).toEqual([['secure', 'signed-in']]);

    // A rule saved in the cluster's profile row asks before the call on the worker process.
    await setApprovalRules(db, agent.id, { 'mcp:secure/echo': 'ask' });
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'mcp secure echo two', clientNonce: 'n2' });
    await until(
      async () =>
        (await front.host.entriesAfter(agent.id, 0)).some(
          (e) => e.kind === 'tool-call' && (e as Entry).status === 'awaiting-approval',
        ),
      'the approval card from the worker process',
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; the worker said:\n${worker.output()}`);
    });

    // No token anywhere but sealed: not in a file of either data dir, a row's text, a log or output.
    const issued = (await (await fetch(new URL('/test/issued', server.control))).json()) as {
      access: string[];
      refresh: string[];
    };
    const tokens = [...issued.access, ...issued.refresh];
    expect(tokens.length).toBeGreaterThan(0);
    const tables = ['sealed_documents', 'mcp_config', 'ledger', 'transcript', 'live_events', 'inbox'];
    const rowText = [];
    for (const table of tables) {
      const all = await db.pool.query(`SELECT * FROM ${db.table(table)}`);
      rowText.push(
        JSON.stringify(all.rows),
        Buffer.concat(
          all.rows.flatMap((row: Record<string, unknown>) =>
            Object.values(row).filter((value): value is Buffer => Buffer.isBuffer(value)),
          ),
        ).toString('latin1'),
      );
    }
    const sealed = await db.pool.query(`SELECT name FROM ${db.table('sealed_documents')}`);
    expect(sealed.rows.map((row: { name: string }) => row.name)).toContain('box:mcp-oauth');
    const files = [...(await everyFile(gatewayDir)), ...(await everyFile(workerDir))];
    for (const token of tokens) {
      for (const { file, text } of files) expect(text.includes(token), `${file} holds a token`).toBe(false);
      for (const text of rowText) expect(text.includes(token), 'a row holds a token').toBe(false);
      expect(worker.output()).not.toContain(token);
      expect(logged.join('\n')).not.toContain(token);
    }
  }, 180_000);
});

/**
 * `sendbox serve --database-url … --object-store-url …` against a real PostgreSQL and Ceph RGW: two
 * boxes on two data dirs are workers of one cluster, each with its own gateway.json, and an agent
 * made through one is served by the other. The cluster's keys live in PostgreSQL, sealed with the
 * master key: both gateways take the same token, a browser session signed in through one is
 * accepted by the other, a box secret saved through one is the other's, an agent secret saved
 * through one is in the environment of its turn on another worker process. A wrong master key stops
 * the start and changes nothing. Bad cluster options fail with what to do.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBoxHost } from '../cli/open-host.ts';
import { sendboxProgram } from '../cli/program.ts';
import { serve, type RunningBox } from '../cli/serve.ts';
import { openLoginLink, pageHeaders } from '../gateway/test-support.ts';
import type { LocalAgentHost } from '../host/agent-host.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { until } from '../testing/processes.ts';
import { readMasterKey } from './master-key.ts';
import { CACHE_MS } from './session-book.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();
const quiet = { out: () => undefined, err: () => undefined };

describe('sendbox serve as a cluster worker', () => {
  const kit = useClusterKit(services);

  /** A master key file (32 random bytes, 0600). */
  async function keyFile(): Promise<string> {
    const file = path.join(await kit.tempDir('key'), 'master.key');
    fs.writeFileSync(file, randomBytes(32), { mode: 0o600 });
    return file;
  }

  /** The AWS SDK reads the bucket's credentials from the process environment, as in production. */
  function bucketCredentialsInEnvironment(): void {
    const { credentials } = services();
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
    kit.defer(() => {
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      return Promise.resolve();
    });
  }

  /** `sendbox serve` on `dataDir` (a new one by default), a worker of the cluster in `schema`. */
  async function serveWorker(
    name: string,
    schema: string,
    masterKeyFile: string,
    dataDir?: string,
  ): Promise<RunningBox> {
    const { databaseUrl, objectStoreUrl } = services();
    const env: NodeJS.ProcessEnv = { SENDBOX_MASTER_KEY_FILE: masterKeyFile };
    const box = await serve(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir: dataDir ?? (await kit.tempDir(name)),
        build: false,
        verbose: false,
        cluster: { databaseUrl, objectStoreUrl, schema },
      },
      (dir, options) => openBoxHost(dir, options, env),
      quiet,
    );
    kit.defer(() => box.stop());
    return box;
  }

  const descriptorOf = (box: RunningBox) =>
    JSON.parse(fs.readFileSync(box.gateway.descriptorPath, 'utf8')) as { port: number; token: string };

  const call = (box: RunningBox, method: string, body: unknown, headers: Record<string, string>) =>
    fetch(new URL(`api/${method}`, box.gateway.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  it('runs two boxes over one PostgreSQL and bucket, sharing the token, the sessions and the box secrets', async () => {
    bucketCredentialsInEnvironment();
    const { schema } = await kit.freshSchema();
    const masterKey = await keyFile();
    const one = await serveWorker('one', schema, masterKey);
    const two = await serveWorker('two', schema, masterKey);

    // Each announces its own gateway in its own gateway.json, with the cluster's token.
    expect(one.gateway.port).not.toBe(two.gateway.port);
    expect(descriptorOf(one).port).toBe(one.gateway.port);
    expect(descriptorOf(two).port).toBe(two.gateway.port);
    expect(descriptorOf(one).token).toBe(descriptorOf(two).token);
    const bearer = { Authorization: `Bearer ${descriptorOf(one).token}` };
    expect((await call(two, 'listAgents', {}, bearer)).status).toBe(200);

    const agent = await one.host.createAgent({ name: 'Shared agent' });
    // Each gateway lists every agent of the cluster: the other one before it ever opened it, and a
    // rename through either is what both list next.
    const nameListed = async (box: RunningBox) => {
      const rows = (await (await call(box, 'listAgents', {}, bearer)).json()) as Array<{
        id: string;
        name: string;
      }>;
      return rows.find((row) => row.id === agent.id)?.name;
    };
    expect(await nameListed(two)).toBe('Shared agent');
    expect((await call(two, 'updateAgent', { id: agent.id, name: 'Renamed on two' }, bearer)).status).toBe(
      200,
    );
    expect(await nameListed(one)).toBe('Renamed on two');
    expect(await nameListed(two)).toBe('Renamed on two');
    // The other box knows it from the database, though its data dir never held it.
    const entries = await two.host.openAgent(agent.id);
    expect(Array.isArray(entries)).toBe(true);
    expect((await two.host.agentSettings(agent.id)).name).toBe('Renamed on two');

    // A browser signed in through one is signed in on the other; the login link works once, on any.
    const link = one.gateway.loginUrl();
    const signIn = await openLoginLink(link);
    expect(signIn.status).toBe(303);
    expect((await call(two, 'listAgents', {}, pageHeaders(two.gateway, signIn))).status).toBe(200);
    const again = await openLoginLink(link.replace(one.gateway.url, two.gateway.url));
    expect(again.status).toBe(403);
    expect(again.setCookie).toBe('');

    // A box secret saved through one is the other's.
    const saved = await call(one, 'setBoxSecret', { name: 'SEARCH_KEY', value: 'sk-cluster-1' }, bearer);
    expect(saved.status).toBe(200);
    const listed = (await (await call(two, 'listBoxSecrets', {}, bearer)).json()) as { names: string[] };
    expect(listed.names).toContain('SEARCH_KEY');
    expect((await (two.host as LocalAgentHost).mcp.boxSecrets.all()).get('SEARCH_KEY')).toBe('sk-cluster-1');

    // Signed out through one: the other refuses the session once its record is read again.
    expect((await call(one, 'revokeSessions', { all: true }, bearer)).status).toBe(200);
    expect((await call(one, 'listAgents', {}, pageHeaders(one.gateway, signIn))).status).toBe(401);
    await until(
      async () => (await call(two, 'listAgents', {}, pageHeaders(two.gateway, signIn))).status === 401,
      'the other gateway to refuse the revoked session',
      CACHE_MS + 5_000,
    );
  }, 120_000);

  it('`sendbox login`, `sessions` and `logout --database-url` act on the cluster: a link for every gateway, a logout on all', async () => {
    bucketCredentialsInEnvironment();
    const { schema } = await kit.freshSchema();
    const masterKey = await keyFile();
    const oneDir = await kit.tempDir('one');
    const one = await serveWorker('one', schema, masterKey, oneDir);
    const two = await serveWorker('two', schema, masterKey);
    const { databaseUrl } = services();
    const said: string[] = [];
    const cli = (...args: string[]) =>
      sendboxProgram((dir, options) => openBoxHost(dir, options, {}), {
        out: (line) => said.push(line),
        err: (line) => said.push(line),
      }).parseAsync(
        // The command, the worker's data dir (a later --data-dir wins), the rest.
        [args[0]!, '--data-dir', oneDir, ...args.slice(1), '--database-url', databaseUrl, '--schema', schema],
        { from: 'user' },
      );
    // sessions and logout from a machine that runs no worker: its data dir holds nothing of the cluster.
    const elsewhere = await kit.tempDir('elsewhere');

    // The worker's data dir has no session.key: without the cluster, login cannot sign a link.
    await expect(
      sendboxProgram((dir, options) => openBoxHost(dir, options, {}), quiet).parseAsync(
        ['login', '--data-dir', oneDir],
        { from: 'user' },
      ),
    ).rejects.toThrow(/has no session.key.*pass --database-url/);

    await cli('login', '--master-key-file', masterKey);
    const link = said.pop()!;
    expect(link.startsWith(one.gateway.url)).toBe(true);
    const signIn = await openLoginLink(link);
    expect(signIn.status).toBe(303);
    expect((await call(two, 'listAgents', {}, pageHeaders(two.gateway, signIn))).status).toBe(200);
    // A second link, redeemed through the other gateway; each works once across the cluster.
    await cli('login', '--master-key-file', masterKey);
    const second = said.pop()!;
    expect((await openLoginLink(second.replace(one.gateway.url, two.gateway.url))).status).toBe(303);
    expect((await openLoginLink(second)).status).toBe(403);
    // A wrong master key signs nothing.
    await expect(cli('login', '--master-key-file', await keyFile())).rejects.toThrow(
      /does not open this cluster's keys/,
    );

    await cli('sessions', '--data-dir', elsewhere);
    expect(said.splice(0).filter((line) => / last used /.test(line))).toHaveLength(2);
    await cli('logout', '--all', '--data-dir', elsewhere);
    expect(said.pop()).toBe('signed out 2 browser sessions');
    for (const box of [one, two]) {
      await until(
        async () => (await call(box, 'listAgents', {}, pageHeaders(box.gateway, signIn))).status === 401,
        'every gateway to refuse the session ended by logout',
        CACHE_MS + 5_000,
      );
    }
  }, 120_000);

  it('refuses a master key that does not open the cluster’s keys, changing nothing', async () => {
    bucketCredentialsInEnvironment();
    const { schema, db } = await kit.freshSchema();
    await serveWorker('first', schema, await keyFile());
    const keysBefore = await db.pool.query(
      `SELECT name, iv, tag, data FROM ${db.table('cluster_keys')} ORDER BY name`,
    );
    expect(keysBefore.rows).toHaveLength(3);

    const dataDir = await kit.tempDir('wrong-key');
    const wrongKey = await keyFile();
    await expect(serveWorker('wrong-key', schema, wrongKey, dataDir)).rejects.toThrow(
      new RegExp(`the master key ${wrongKey} does not open this cluster's keys.*nothing was changed`),
    );
    const keysAfter = await db.pool.query(
      `SELECT name, iv, tag, data FROM ${db.table('cluster_keys')} ORDER BY name`,
    );
    expect(keysAfter.rows).toEqual(keysBefore.rows);
    expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
  }, 120_000);

  it('puts an agent secret saved through one worker in the environment of its turn on another worker process', async () => {
    const cluster = await kit.cluster();
    const { worker: gateway } = await cluster.acceptingGateway();
    const worker = await cluster.workerProcess('worker');

    const agent = await gateway.host.createAgent({ name: 'Secret keeper' });
    await (await gateway.host.sessionOf(agent.id)).secrets.set('API_TOKEN', 'tok-4e1f');
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'env API_TOKEN', clientNonce: 'n1' });
    const log = path.join(agentPaths(worker.dataDir, agent.id).sandbox, 'log.txt');
    // `printenv >> log.txt` makes the file before it writes: wait for the line, not the file.
    await until(
      () => fs.existsSync(log) && fs.readFileSync(log, 'utf8').endsWith('\n'),
      'the turn on the worker process',
      30_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; the worker said:\n${worker.output()}`);
    });
    expect(fs.readFileSync(log, 'utf8')).toBe('tok-4e1f\n');
  }, 120_000);

  it('refuses cluster options that cannot work, saying what to give', async () => {
    const dataDir = await kit.tempDir('bad');
    const program = sendboxProgram((dir, options) => openBoxHost(dir, options, {}), quiet);
    const run = (...args: string[]) =>
      program.parseAsync(['serve', '--port', '0', '--no-build', '--data-dir', dataDir, ...args], {
        from: 'user',
      });
    await expect(run('--database-url', 'postgres://127.0.0.1:1/x')).rejects.toThrow(/--object-store-url/);
    await expect(run('--object-store-url', 's3://bucket-name')).rejects.toThrow(/--database-url/);
    const { databaseUrl, objectStoreUrl } = services();
    await expect(run('--database-url', databaseUrl, '--object-store-url', objectStoreUrl)).rejects.toThrow(
      /SENDBOX_MASTER_KEY_FILE is not set/,
    );
  });

  it('refuses a master key file of the wrong size or readable by others, saying how to make one', async () => {
    const dir = await kit.tempDir('keys');
    const short = path.join(dir, 'short.key');
    fs.writeFileSync(short, randomBytes(16), { mode: 0o600 });
    await expect(readMasterKey(short)).rejects.toThrow(/holds 16 bytes, not 32.*head -c 32 \/dev\/urandom/);
    const loose = path.join(dir, 'loose.key');
    fs.writeFileSync(loose, randomBytes(32), { mode: 0o644 });
    fs.chmodSync(loose, 0o644);
    await expect(readMasterKey(loose)).rejects.toThrow(/readable by others \(mode 644\).*chmod 600/);
    const good = path.join(dir, 'good.key');
    fs.writeFileSync(good, randomBytes(32), { mode: 0o600 });
    expect(await readMasterKey(good)).toHaveLength(32);
  });
});

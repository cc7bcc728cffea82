/**
 * `sendbox serve --database-url … --object-store-url …` against a real PostgreSQL and Ceph RGW: two
 * boxes on two data dirs are workers of one cluster, each with its own gateway.json, and an agent
 * made through one is served by the other. Bad cluster options fail with what to do.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBoxHost } from '../cli/open-host.ts';
import { sendboxProgram } from '../cli/program.ts';
import { serve, type RunningBox } from '../cli/serve.ts';
import { useServices } from '../stores/postgres/backend.ts';

const services = useServices();
const quiet = { out: () => undefined, err: () => undefined };

describe('sendbox serve as a cluster worker', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  async function tempDir(name: string): Promise<string> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), `sendbox-${name}-`));
    cleanups.push(() => fs.promises.rm(dir, { recursive: true, force: true }));
    return dir;
  }

  it('runs two boxes over one PostgreSQL and bucket, each announcing its own gateway', async () => {
    const { databaseUrl, objectStoreUrl, credentials } = services();
    const keyDir = await tempDir('key');
    const keyFile = path.join(keyDir, 'master.key');
    fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
    const env: NodeJS.ProcessEnv = {
      SENDBOX_MASTER_KEY_FILE: keyFile,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    };
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    // The AWS SDK reads its credentials from the process environment, as it would in production.
    process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
    cleanups.push(() => {
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      return Promise.resolve();
    });
    const boxes: RunningBox[] = [];
    for (const name of ['one', 'two']) {
      const dataDir = await tempDir(name);
      const box = await serve(
        {
          host: '127.0.0.1',
          port: 0,
          dataDir,
          build: false,
          verbose: false,
          cluster: { databaseUrl, objectStoreUrl },
        },
        (dir, options) => openBoxHost(dir, options, env),
        quiet,
      );
      boxes.push(box);
      cleanups.push(() => box.stop());
      const descriptor = JSON.parse(fs.readFileSync(path.join(dataDir, 'gateway.json'), 'utf8')) as {
        port: number;
      };
      expect(descriptor.port).toBe(box.gateway.port);
    }
    const [one, two] = boxes as [RunningBox, RunningBox];
    expect(one.gateway.port).not.toBe(two.gateway.port);
    const agent = await one.host.createAgent({ name: 'Shared agent' });
    // The other box knows it from the database, though its data dir never held it.
    const entries = await two.host.openAgent(agent.id);
    expect(Array.isArray(entries)).toBe(true);
    expect((await two.host.agentSettings(agent.id)).name).toBe('Shared agent');
  });

  it('refuses cluster options that cannot work, saying what to give', async () => {
    const dataDir = await tempDir('bad');
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
});

/**
 * The cluster backend's real services for tests and benchmarks: a PostgreSQL 15 (initdb in a temp
 * folder, run as an unprivileged user) and a single-node Ceph (one monitor, one memstore OSD, one
 * RADOS Gateway, `auth none`), all on free loopback ports, each stopped by its PID.
 *
 * `.ci/run` starts them once (`tsx packages/box/src/testing/services.ts start DIR`) and exports
 * their URLs; a test run without those variables starts its own (`testServices`), so nothing is
 * ever skipped: a machine without the Debian packages fails with what to install.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { existsSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const PG_BIN = '/usr/lib/postgresql/15/bin';
export const TEST_BUCKET = 'sendbox-test';
const S3_ACCESS_KEY = 'sendbox-ci';
const S3_SECRET_KEY = 'sendbox-ci-secret';

export interface RunningServices {
  databaseUrl: string;
  /** `s3://bucket?endpoint=…&region=…` (the credentials are in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). */
  objectStoreUrl: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** What to kill, in this order, at the end. */
  pids: number[];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function need(file: string, debianPackage: string): string {
  if (!existsSync(file)) {
    throw new Error(
      `${file} is missing: install Debian's ${debianPackage} (apt-get install -y ${debianPackage}), as .ci/run does`,
    );
  }
  return file;
}

function logTo(file: string): number {
  return openSync(file, 'a');
}

/** Starts a daemon in the foreground of its own process group, its output to `log`. */
function daemon(
  command: string,
  args: string[],
  log: string,
  ids?: { uid: number; gid: number },
): ChildProcess {
  const fd = logTo(log);
  const child = spawn(command, args, { stdio: ['ignore', fd, fd], detached: true, ...ids });
  closeSync(fd);
  child.unref();
  return child;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what} did not come up in ${timeoutMs / 1000} s${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The unprivileged user PostgreSQL runs as when we are root (it refuses to run as root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((row) => row.startsWith('postgres:'));
  if (!line) throw new Error('no "postgres" user: install Debian\'s postgresql-15, which creates it');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export async function startPostgres(dir: string): Promise<{ url: string; pid: number }> {
  const initdb = need(path.join(PG_BIN, 'initdb'), 'postgresql-15');
  const postgres = need(path.join(PG_BIN, 'postgres'), 'postgresql-15');
  const home = path.join(dir, 'postgres');
  const data = path.join(home, 'data');
  await mkdir(home, { recursive: true, mode: 0o700 });
  const ids = postgresUser();
  if (ids) {
    // The postgres user passes through the services folder (a temp folder is 0700) into its own.
    await chmod(dir, 0o711);
    await chown(home, ids.uid, ids.gid);
  }
  execFileSync(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...ids,
  });
  const port = await freePort();
  const child = daemon(
    postgres,
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      home,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=300',
      '-c',
      'fsync=on',
    ],
    path.join(dir, 'postgres.log'),
    ids,
  );
  const { default: pg } = await import('pg');
  await until('PostgreSQL', 30_000, async () => {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      await client.query('CREATE DATABASE sendbox');
    } finally {
      await client.end();
    }
    return true;
  });
  return { url: `postgres://postgres@127.0.0.1:${port}/sendbox`, pid: child.pid! };
}

export async function startCeph(
  dir: string,
): Promise<{ url: string; pids: number[]; accessKeyId: string; secretAccessKey: string }> {
  const mon = need('/usr/bin/ceph-mon', 'ceph-mon');
  const osd = need('/usr/bin/ceph-osd', 'ceph-osd');
  const rgw = need('/usr/bin/radosgw', 'radosgw');
  const home = path.join(dir, 'ceph');
  for (const sub of ['mon', 'osd0', 'run', 'log', 'rgw'])
    await mkdir(path.join(home, sub), { recursive: true });
  const monPort = await freePort();
  const rgwPort = await freePort();
  const fsid = randomUUID();
  const conf = path.join(home, 'ceph.conf');
  writeFileSync(
    conf,
    [
      '[global]',
      `fsid = ${fsid}`,
      `mon host = v1:127.0.0.1:${monPort}`,
      'mon initial members = a',
      'auth cluster required = none',
      'auth service required = none',
      'auth client required = none',
      'auth allow insecure global id reclaim = true',
      'osd pool default size = 1',
      'osd pool default min size = 1',
      'mon allow pool size one = true',
      'mon warn on pool no redundancy = false',
      'osd objectstore = memstore',
      'memstore device bytes = 536870912',
      'osd crush chooseleaf type = 0',
      `run dir = ${home}/run`,
      `admin socket = ${home}/run/$name.asok`,
      `log file = ${home}/log/$name.log`,
      'ms bind ipv4 = true',
      'ms bind ipv6 = false',
      `pid file = ${home}/run/$name.pid`,
      'public addr = 127.0.0.1',
      '[mon.a]',
      `mon data = ${home}/mon`,
      '[osd.0]',
      `osd data = ${home}/osd0`,
      '[client.rgw]',
      `rgw frontends = beast endpoint=127.0.0.1:${rgwPort}`,
      `rgw data = ${home}/rgw`,
      '',
    ].join('\n'),
  );
  const quiet = { stdio: ['ignore', 'ignore', 'pipe'] as ['ignore', 'ignore', 'pipe'] };
  execFileSync(
    '/usr/bin/monmaptool',
    ['--create', '--add', 'a', `v1:127.0.0.1:${monPort}`, '--fsid', fsid, path.join(home, 'monmap')],
    quiet,
  );
  execFileSync(mon, ['-c', conf, '--mkfs', '-i', 'a', '--monmap', path.join(home, 'monmap')], quiet);
  const pids: number[] = [];
  try {
    await startCephDaemons(pids);
  } catch (error) {
    await stopPids(pids);
    throw error;
  }
  return {
    url: `s3://${TEST_BUCKET}?endpoint=${encodeURIComponent(`http://127.0.0.1:${rgwPort}`)}&region=us-east-1`,
    pids,
    accessKeyId: S3_ACCESS_KEY,
    secretAccessKey: S3_SECRET_KEY,
  };

  /**
   * Starts the OSD and waits until the monitor marks it up. Ceph 16's OSD can race its own monitor
   * client at start: it sends a command before it knows the cluster's fsid, the monitor refuses it
   * ("wrong fsid"), and the OSD exits, so the gateway would wait forever for placement groups. An OSD
   * that exits or is not up within 30 s is started again, up to 6 times, a second longer apart each
   * time (three quick tries in a row all lost that race once, at load 2).
   */
  async function startOsd(ceph: (...args: string[]) => string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const child = daemon(osd, ['-c', conf, '-i', '0', '-f'], path.join(home, 'log', 'osd.out'));
      let exited = false;
      child.once('exit', () => (exited = true));
      pids.unshift(child.pid!);
      try {
        const state = await until('the Ceph OSD', 30_000, () => {
          if (exited) return Promise.resolve('exited' as const);
          const dump = JSON.parse(ceph('osd', 'dump', '-f', 'json')) as {
            osds?: { osd: number; up: number }[];
          };
          return Promise.resolve(
            dump.osds?.some((entry) => entry.osd === 0 && entry.up === 1) ? 'up' : undefined,
          );
        });
        if (state === 'exited') throw new Error('the Ceph OSD exited while starting (see log/osd.0.log)');
        return;
      } catch (error) {
        await stopPids([pids.shift()!]);
        if (attempt === 6) throw error;
        await new Promise((resolve) => setTimeout(resolve, attempt * 1000));
      }
    }
  }

  /** Monitor, OSD, gateway; each PID goes into `pids` (gateway first: the stopping order) as it starts. */
  async function startCephDaemons(pids: number[]): Promise<void> {
    pids.push(daemon(mon, ['-c', conf, '-i', 'a', '-f'], path.join(home, 'log', 'mon.out')).pid!);
    const ceph = (...args: string[]) =>
      execFileSync('/usr/bin/ceph', ['-c', conf, '--connect-timeout', '30', ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    // The OSD's own uuid, named at creation and at mkfs (without it the monitor refuses a zero uuid).
    const osdUuid = randomUUID();
    ceph('osd', 'create', osdUuid);
    execFileSync(osd, ['-c', conf, '-i', '0', '--mkfs', '--osd-uuid', osdUuid], quiet);
    await startOsd(ceph);
    ceph('osd', 'crush', 'add', 'osd.0', '1.0', 'host=localhost', 'root=default');
    pids.unshift(daemon(rgw, ['-c', conf, '-n', 'client.rgw', '-f'], path.join(home, 'log', 'rgw.out')).pid!);
    await until('the Ceph RADOS Gateway', 120_000, async () => {
      const response = await fetch(`http://127.0.0.1:${rgwPort}/`);
      await response.arrayBuffer();
      return true;
    });
    execFileSync(
      '/usr/bin/radosgw-admin',
      [
        '-c',
        conf,
        'user',
        'create',
        '--uid=sendbox-ci',
        '--display-name=sendbox CI',
        `--access-key=${S3_ACCESS_KEY}`,
        `--secret-key=${S3_SECRET_KEY}`,
      ],
      quiet,
    );
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
    const s3 = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
    });
    await until('the test bucket', 30_000, async () => {
      await s3.send(new CreateBucketCommand({ Bucket: TEST_BUCKET }));
      return true;
    });
    s3.destroy();
  }
}

/** Kills each PID (SIGTERM, then SIGKILL after 10 s) and waits until it is gone. */
export async function stopPids(pids: readonly number[]): Promise<void> {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const pid of pids) {
    if (!alive(pid)) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 10_000;
    while (alive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

export async function startServices(dir: string): Promise<RunningServices> {
  // One after the other: the machine has two cores, and Ceph's start is the long one.
  const postgres = await startPostgres(dir);
  try {
    const ceph = await startCeph(dir);
    return {
      databaseUrl: postgres.url,
      objectStoreUrl: ceph.url,
      accessKeyId: ceph.accessKeyId,
      secretAccessKey: ceph.secretAccessKey,
      pids: [...ceph.pids, postgres.pid],
    };
  } catch (error) {
    await stopPids([postgres.pid]);
    throw error;
  }
}

/** The variables `.ci/run` exports for the test run. */
export function servicesEnv(services: RunningServices): Record<string, string> {
  return {
    SENDBOX_TEST_DATABASE_URL: services.databaseUrl,
    SENDBOX_TEST_OBJECT_STORE_URL: services.objectStoreUrl,
    SENDBOX_TEST_S3_ACCESS_KEY_ID: services.accessKeyId,
    SENDBOX_TEST_S3_SECRET_ACCESS_KEY: services.secretAccessKey,
  };
}

export interface TestServices {
  databaseUrl: string;
  objectStoreUrl: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Stops what this call started (nothing when the services came from the environment). */
  release(): Promise<void>;
}

/** The services of the environment (.ci/run), or new ones for this test file: never none. */
export async function testServices(): Promise<TestServices> {
  const env = process.env;
  if (env.SENDBOX_TEST_DATABASE_URL && env.SENDBOX_TEST_OBJECT_STORE_URL) {
    return {
      databaseUrl: env.SENDBOX_TEST_DATABASE_URL,
      objectStoreUrl: env.SENDBOX_TEST_OBJECT_STORE_URL,
      credentials: {
        accessKeyId: env.SENDBOX_TEST_S3_ACCESS_KEY_ID ?? S3_ACCESS_KEY,
        secretAccessKey: env.SENDBOX_TEST_S3_SECRET_ACCESS_KEY ?? S3_SECRET_KEY,
      },
      release: () => Promise.resolve(),
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-services-'));
  const services = await startServices(dir);
  return {
    databaseUrl: services.databaseUrl,
    objectStoreUrl: services.objectStoreUrl,
    credentials: { accessKeyId: services.accessKeyId, secretAccessKey: services.secretAccessKey },
    async release() {
      await stopPids(services.pids);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// `tsx services.ts start DIR` writes DIR/env (shell exports) and DIR/pids; `stop DIR` kills those PIDs.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, dir] = process.argv.slice(2);
  if (!dir || (command !== 'start' && command !== 'stop')) {
    console.error('usage: services.ts start|stop DIR');
    process.exit(2);
  }
  if (command === 'start') {
    await mkdir(dir, { recursive: true });
    const started = Date.now();
    const services = await startServices(dir);
    writeFileSync(path.join(dir, 'pids'), services.pids.join('\n') + '\n');
    const env = servicesEnv(services);
    writeFileSync(
      path.join(dir, 'env'),
      Object.entries(env)
        .map(([name, value]) => `export ${name}='${value}'`)
        .join('\n') + '\n',
    );
    console.log(`PostgreSQL and Ceph RGW up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } else {
    const file = path.join(dir, 'pids');
    const pids = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
    await stopPids(pids);
  }
}

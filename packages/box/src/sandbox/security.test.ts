/**
 * The box as an attacker tries it: the real host and gateway on a temp data
 * dir, tools confined by bubblewrap, and a scripted model whose tool calls
 * attempt each escape. A control case runs the same escape unconfined, to
 * show the check can fail.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFiles, boxAgentFolders } from '../gateway/files.ts';
import { startGateway, type RunningGateway } from '../gateway/server.ts';
import { makeWebRoot } from '../gateway/test-support.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { HostError } from '../agent/errors.ts';
import type { ScriptedStep } from '../providers/scripted.ts';
import { encodedForms } from '../secrets/scrub.ts';
import { hostFixture, lastToolOutputs, type HostFixture } from '../testing/host-fixture.ts';
import type { AgentHostOptions } from '../host/agent-host.ts';
import { detectConfinement, PROXY_PORT_INSIDE } from './confinement.ts';
import { addressKind, isLocalAddress } from '../net/addresses.ts';
import { domainAllowed, EgressProxy } from './egress-proxy.ts';
import type { EgressProxyOptions } from './egress-proxy.ts';

let fx: HostFixture | undefined;
let gateway: RunningGateway | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await fx?.dispose();
  fx = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const shell = (command: string, timeout?: number) => ({
  name: 'shell',
  input: { command, ...(timeout ? { timeout } : {}) },
});
const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });
const done: ScriptedStep[] = [{ toolCalls: [send({ type: 'text', content: 'done' })] }, {}];

interface Scene {
  fx: HostFixture;
  gateway: RunningGateway;
  dataDir: string;
  sandbox: string;
}
type Calls = NonNullable<ScriptedStep['toolCalls']>;

/**
 * A box (confined unless `options` say otherwise) with its gateway running, so gateway.json and
 * the port exist; `setup` prepares the scene, then one turn makes the tool calls `calls` returns.
 */
async function attack(
  calls: (scene: Scene) => Calls,
  options: Partial<AgentHostOptions> = {},
  setup: (scene: Scene) => Promise<void> = async () => {},
): Promise<Scene & { outputs: string[]; ms: number }> {
  fx = await hostFixture([], options);
  const webRoot = await makeWebRoot();
  cleanups.push(() => rm(webRoot, { recursive: true, force: true }));
  gateway = await startGateway({
    host: fx.host,
    files: agentFiles(fx.host, boxAgentFolders(fx.dataDir)),
    dataDir: fx.dataDir,
    webRoot,
    version: '0.0.0-test',
    port: 0,
  });
  const scene = { fx, gateway, dataDir: fx.dataDir, sandbox: fx.sandbox };
  await setup(scene);
  fx.model.push({ toolCalls: calls(scene) }, ...done);
  const started = Date.now();
  await fx.prompt('try it');
  return { ...scene, outputs: lastToolOutputs(fx.model, 1), ms: Date.now() - started };
}

describe('tool confinement', () => {
  it('is on: bubblewrap confines this box', async () => {
    fx = await hostFixture();
    expect(fx.host.sandboxStatus()).toMatchObject({ mode: 'bubblewrap', confined: true });
  });

  it("hides gateway.json, the secrets key, the data dir, $HOME and other agents' sandboxes", async () => {
    const probe = path.join(os.homedir(), `.sendbox-security-probe-${process.pid}`);
    await writeFile(probe, 'host-home-data');
    cleanups.push(() => rm(probe, { force: true }));
    let otherId = '';
    const run = await attack(
      ({ dataDir }) => [
        shell(`cat ${dataDir}/gateway.json`),
        shell(`base64 ${dataDir}/keys/secrets.key`),
        shell(`ls -a ${dataDir} ${dataDir}/agents ${dataDir}/sandboxes 2>&1; echo listed`),
        shell(`ls -a ${os.homedir()} 2>&1; cat ${probe}`),
        shell(`cat ${agentPaths(dataDir, otherId).sandbox}/private.txt`),
      ],
      {},
      async ({ fx: box, dataDir }) => {
        otherId = (await box.host.createAgent({ name: 'Other agent' })).id;
        await writeFile(path.join(agentPaths(dataDir, otherId).sandbox, 'private.txt'), 'other-agent-data');
        await box.host.openAgent(box.agentId);
      },
    );
    const [gatewayJson, key, listing, home, otherFile] = run.outputs;
    expect(gatewayJson).toMatch(/No such file|Permission denied/);
    expect(gatewayJson).not.toContain(run.gateway.token);
    expect(key).toMatch(/No such file|Permission denied/);
    expect(listing).toContain('listed');
    expect(listing).not.toMatch(/gateway\.json|keys|agent-transcripts|profile/);
    expect(listing).not.toContain(otherId);
    expect(home).not.toContain('host-home-data');
    expect(otherFile).toMatch(/No such file|Permission denied/);
    expect(otherFile).not.toContain('other-agent-data');
    expect(await run.fx.jsonlText()).not.toContain(run.gateway.token);
  });

  it('control: unconfined (--unsafe-host-tools), the same command reads gateway.json', async () => {
    const unsafe = await detectConfinement({ bwrap: '/nonexistent/bwrap', unsafeHostTools: true });
    expect(unsafe.status.mode).toBe('unsafe-host');
    const run = await attack(({ dataDir }) => [shell(`cat ${dataDir}/gateway.json`)], {
      sandbox: { confinement: unsafe },
    });
    expect(run.outputs[0]).toContain(run.gateway.token);
  });

  it('refuses shell, saying why and how to fix it, when bubblewrap cannot start', async () => {
    const run = await attack(() => [shell('echo ran')], { sandbox: { bwrap: '/nonexistent/bwrap' } });
    expect(run.fx.host.sandboxStatus()).toMatchObject({ mode: 'unavailable', confined: false });
    expect(run.outputs[0]).toMatch(/shell tool is disabled on this box: bubblewrap .* is not installed/);
    expect(run.outputs[0]).toContain('apt-get install bubblewrap');
    expect(run.outputs[0]).toContain('--unsafe-host-tools');
    expect(run.outputs[0]).not.toMatch(/^ran/m);
  });

  it('cannot reach the gateway port nor a host on another loopback address', async () => {
    const outside = net.createServer((socket) => socket.end('hello from outside\n'));
    let reached = 0;
    outside.on('connection', () => (reached += 1));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.2', resolve));
    cleanups.push(() => new Promise<void>((resolve) => outside.close(() => resolve())));
    const outsidePort = (outside.address() as net.AddressInfo).port;
    const run = await attack(({ gateway: running }) => [
      shell(`exec 3<>/dev/tcp/127.0.0.1/${running.port} && echo CONNECTED-$((40 + 2))`),
      shell(`exec 3<>/dev/tcp/127.0.0.2/${outsidePort} && head -1 <&3`),
      shell('getent hosts registry.npmjs.org || echo no-dns'),
    ]);
    expect(run.outputs[0]).not.toContain('CONNECTED-42');
    expect(run.outputs[0]).toMatch(/Network is unreachable|Connection refused/);
    expect(run.outputs[1]).not.toContain('hello from outside');
    expect(run.outputs[2]).toContain('no-dns');
    expect(reached).toBe(0);
  });

  it('bounds the number of processes (fork bomb) and ends the turn at the timeout', async () => {
    const limits = { processes: 48 };
    // perl's fork() fails at once at the limit (bash would retry for many seconds).
    const count =
      'perl -e \'my $n = 0; for (1..300) { my $p = fork(); last unless defined $p; if (!$p) { sleep 30; exit 0 } $n++ } print "forked=$n\\n"\'';
    const run = await attack(() => [shell(count), shell('bomb() { bomb | bomb & }; bomb; sleep 60', 3000)], {
      sandbox: { limits },
    });
    const forked = Number(/forked=(\d+)/.exec(run.outputs[0] ?? '')?.[1]);
    expect(forked).toBeGreaterThan(0);
    expect(forked).toBeLessThan(limits.processes);
    expect(run.outputs[1]).toContain('"timedOut":true');
    expect(run.ms).toBeLessThan(20_000);
    expect((await run.fx.entries()).at(-1)?.kind).toBe('turn-ended');
  });

  it('gives each command a private, writable /tmp and /dev/shm', async () => {
    const marker = path.join(os.tmpdir(), `sendbox-host-tmp-${process.pid}`);
    await writeFile(marker, 'host tmp');
    cleanups.push(() => rm(marker, { force: true }));
    const run = await attack(() => [
      shell(`echo one > /tmp/t && echo shm > /dev/shm/s && cat /tmp/t /dev/shm/s; ls /tmp; cat ${marker}`),
      shell('cat /tmp/t 2>&1 || echo gone'),
    ]);
    expect(run.outputs[0]).toContain('"stdout":"one\\nshm\\n');
    expect(run.outputs[0]).not.toContain('host tmp');
    expect(run.outputs[1]).toContain('gone');
  });

  it("lets the agent's commands change what the host wrote for it (write, uploads)", async () => {
    const run = await attack(
      () => [
        { name: 'write', input: { path: 'notes/a.txt', content: 'one' } },
        shell('echo two >> notes/a.txt && echo three >> uploads/u.txt && cat notes/a.txt uploads/u.txt'),
      ],
      {},
      async ({ fx: box }) => {
        await box.host.uploadFile({ agentId: box.agentId, fileName: 'u.txt', bytes: Buffer.from('up\n') });
      },
    );
    expect(run.outputs[1]).toContain('"stdout":"onetwo\\nup\\nthree\\n"');
  });

  it('bounds memory, file size and CPU time per process', async () => {
    const limits = { memoryBytes: 256 * 1024 ** 2, fileBytes: 1024 ** 2, cpuSeconds: 1 };
    const run = await attack(
      () => [
        shell('perl -e \'my $x = "a" x (512 * 1024 * 1024); print "got-", 6 * 7, "\\n"\''),
        shell('head -c 2000000 /dev/zero > big.bin; echo "exit=$?"; wc -c < big.bin'),
        shell('while :; do :; done', 30_000),
      ],
      { sandbox: { limits } },
    );
    expect(run.outputs[0]).not.toContain('got-42');
    expect(run.outputs[0]).toMatch(/Out of memory/);
    expect(run.outputs[1]).toMatch(/File size limit exceeded/);
    expect(run.outputs[1]).toContain('1048576');
    // Killed by the kernel at the CPU limit (SIGKILL at the hard limit, or SIGXCPU), long before the timeout.
    expect(run.outputs[2]).toMatch(/"exitCode":(137|152)/);
    expect(run.outputs[2]).not.toContain('"timedOut":true');
  });

  it('kills setsid children: past the timeout, or when the command returns', async () => {
    const run = await attack(() => [
      shell('setsid sleep 314.5 > /dev/null 2>&1 < /dev/null & setsid sleep 314.6 & echo started'),
      shell('setsid bash -c "sleep 314.7"', 1000),
    ]);
    expect(run.outputs[0]).toContain('started');
    expect(run.outputs[1]).toContain('"timedOut":true');
    expect(run.ms).toBeLessThan(10_000);
    expect((await run.fx.entries()).at(-1)?.kind).toBe('turn-ended');
    expect(await processesNamed('sleep 314.')).toEqual([]);
  });
});

describe('host-side file work', () => {
  it('errors within seconds on a FIFO (read, attach) while the gateway stays responsive', async () => {
    // Four FIFOs: the size of libuv's thread pool, which four blocked opens used to exhaust.
    const run = await attack(
      ({ sandbox }) => [
        { name: 'read', input: { path: 'p1' } },
        { name: 'read', input: { path: 'p2' } },
        { name: 'read', input: { path: 'p3' } },
        send({ type: 'attachment', url: `file://${sandbox}/p4` }),
      ],
      {},
      ({ sandbox }) => {
        for (const name of ['p1', 'p2', 'p3', 'p4']) execFileSync('mkfifo', [path.join(sandbox, name)]);
        return Promise.resolve();
      },
    );
    expect(run.ms).toBeLessThan(5_000);
    for (const out of run.outputs) expect(out).toMatch(/is a named pipe \(FIFO\), not a regular file/);
    const started = Date.now();
    const response = await fetch(new URL('api/listAgents', run.gateway.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${run.gateway.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses an upload through a link the agent planted, and never writes outside', async () => {
    const outsideDir = path.join(os.tmpdir(), `sendbox-outside-${process.pid}-${Date.now()}`);
    await mkdir(outsideDir, { recursive: true });
    cleanups.push(() => rm(outsideDir, { recursive: true, force: true }));
    const run = await attack(() => [shell(`ln -s ${outsideDir} uploads && ls -l uploads`)]);
    const error = await run.fx.host
      .uploadFile({ agentId: run.fx.agentId, fileName: 'notes.txt', bytes: Buffer.from('user data') })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).message).toMatch(/symbolic link/);
    expect(await readdir(outsideDir)).toEqual([]);

    // A link planted in place of the file's name: the upload gets a free name, the link's target stays untouched.
    await gateway?.close();
    gateway = undefined;
    await run.fx.dispose();
    fx = await hostFixture();
    const target = path.join(outsideDir, 'target.txt');
    await mkdir(path.join(fx.sandbox, 'uploads'));
    await symlink(target, path.join(fx.sandbox, 'uploads', 'notes.txt'));
    const entry = await fx.host.uploadFile({
      agentId: fx.agentId,
      fileName: 'notes.txt',
      bytes: Buffer.from('data'),
    });
    expect(entry).toMatchObject({ sandbox_path: path.join(fx.sandbox, 'uploads', 'notes (1).txt') });
    expect(await readdir(outsideDir)).toEqual([]);
  });
});

describe('secrets in their encodings', () => {
  const SECRET = 'ghp_S3cret/Va+lue"42';
  const perl = (expr: string) => `perl -e '$_ = $ENV{GH_TOKEN}; ${expr}; print "$_\\n"'`;

  it('never reach the JSONL or the model, and a file holding one is not attached', async () => {
    fx = await hostFixture(
      [
        {
          toolCalls: [send({ type: 'secret-request', secret: { label: 'GitHub token', name: 'GH_TOKEN' } })],
        },
      ],
      { sendReminderEvery: 100 }, // one turn of many shell calls, without a reminder in between
    );
    const forms = [
      shell('printf %s "$GH_TOKEN"'),
      shell('printf %s "$GH_TOKEN" | tr a-z A-Z'),
      shell('printf %s "$GH_TOKEN" | base64 -w0'),
      shell('printf %s "$GH_TOKEN" | base64 -w0 | tr "+/" "-_" | tr -d ='),
      shell('printf "x%s" "$GH_TOKEN" | base64 -w0'),
      shell('printf "xy%s" "$GH_TOKEN" | base64 -w0'),
      shell('printf %s "$GH_TOKEN" | od -An -tx1 | tr -d " \\n"'),
      shell('printf %s "$GH_TOKEN" | od -An -tx1 | tr -d " \\n" | tr a-f A-F'),
      shell(perl('s/([^A-Za-z0-9_.~-])/sprintf("%%%02X", ord($1))/ge')),
      shell(perl('s/(["\\\\\\/])/\\\\$1/g')),
    ];
    fx.model.push(
      { toolCalls: [...forms, shell('printf %s "$GH_TOKEN" | base64 -w0 > b64.txt')] },
      { toolCalls: [send({ type: 'attachment', url: `file://${fx.sandbox}/b64.txt` })] },
      ...done,
    );
    await fx.prompt('use my github');
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: SECRET });
    await fx.host.idle(fx.agentId);
    const outputs = lastToolOutputs(fx.model, 2);
    expect(outputs).toHaveLength(forms.length + 1);
    for (const [i, out] of outputs.slice(0, forms.length).entries()) {
      expect(out, `form ${i}`).toContain('[secret GH_TOKEN redacted]');
    }
    expect(lastToolOutputs(fx.model, 3)[0]).toMatch(/^Not delivered: b64\.txt contains the secret GH_TOKEN/);
    expect(await readdir(agentPaths(fx.dataDir, fx.agentId).attachments).catch(() => [])).toEqual([]);
    const everything = [await fx.jsonlText(), JSON.stringify(fx.model.requests)].join('\n');
    const { exact, folded } = encodedForms(SECRET);
    for (const form of exact) expect(everything, form).not.toContain(form);
    for (const form of folded) expect(everything.toLowerCase(), form).not.toContain(form.toLowerCase());

    // An upload holding the secret (here hex) is refused before it is stored.
    const upload = fx.host.uploadFile({
      agentId: fx.agentId,
      fileName: 'dump.txt',
      bytes: Buffer.from(`token: ${Buffer.from(SECRET).toString('hex')}`),
    });
    await expect(upload).rejects.toThrow(/dump\.txt contains the secret GH_TOKEN/);
    expect(await readdir(path.join(fx.sandbox, 'uploads')).catch(() => [])).toEqual([]);
  });
});

// ---------------------------------------------------------------------------

/** Host processes whose command line contains `needle` (leftovers of a sandbox). */
async function processesNamed(needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const text = cmdline.split('\0').join(' ');
    if (text.includes(needle) && !text.includes('vitest')) found.push(`${pid}: ${text}`);
  }
  return found;
}

describe('network allowlist', () => {
  it('reaches an allowed host through the proxy only; other hosts and local addresses stay out', async () => {
    const outside = http.createServer((_req, res) => res.end('outside says hi'));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.2', resolve));
    cleanups.push(() => new Promise<void>((resolve) => outside.close(() => resolve())));
    const port = (outside.address() as net.AddressInfo).port;
    const get = (url: string) =>
      `exec 3<>/dev/tcp/127.0.0.1/${PROXY_PORT_INSIDE} && printf 'GET ${url} HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
    const run = await attack(
      ({ gateway: running }) => [
        shell(get(`http://outside.test:${port}/`)),
        shell(get(`http://elsewhere.test:${port}/`)),
        shell(get(`http://localhost:${running.port}/`)),
        shell(`exec 3<>/dev/tcp/127.0.0.2/${port} && echo direct-$((1 + 1))`),
        // CONNECT (what HTTPS clients send), then a request through the tunnel.
        shell(
          `exec 3<>/dev/tcp/127.0.0.1/${PROXY_PORT_INSIDE} && ` +
            `printf 'CONNECT outside.test:${port} HTTP/1.1\\r\\n\\r\\nGET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`,
        ),
      ],
      {
        sandbox: {
          egress: {
            // outside.test plays a public host at 127.0.0.2; everything else keeps the real rules.
            network: {
              resolve: (host) =>
                Promise.resolve([
                  { address: host === 'outside.test' ? '127.0.0.2' : '127.0.0.1', family: 4 },
                ]),
              kindOf: (address) => (address === '127.0.0.2' ? 'public' : addressKind(address)),
            },
          },
        },
      },
      async ({ fx: box }) => {
        const file = agentPaths(box.dataDir, box.agentId).profile;
        const profile = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
        await writeFile(
          file,
          JSON.stringify({ ...profile, sandbox: { allowDomains: ['outside.test', 'localhost'] } }),
        );
      },
    );
    expect(run.outputs[0]).toContain('outside says hi');
    expect(run.outputs[1]).toContain('403 Forbidden');
    expect(run.outputs[1]).toContain('network access to elsewhere.test is not allowed');
    expect(run.outputs[2]).toContain('refused localhost: it resolves to 127.0.0.1');
    expect(run.outputs[2]).not.toContain(run.gateway.token);
    expect(run.outputs[3]).not.toContain('direct-2');
    expect(run.outputs[4]).toMatch(/200 Connection Established[\s\S]*outside says hi/);
  });

  it("bounds an agent's connections through its proxy: 8,000 opened, 64 held, the rest refused, the box answering", async () => {
    const run = await attack(
      () => [shell('true')], // starts the agent's proxy
      {},
      async ({ fx: box }) => {
        const file = agentPaths(box.dataDir, box.agentId).profile;
        const profile = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
        await writeFile(file, JSON.stringify({ ...profile, sandbox: { allowDomains: ['*'] } }));
      },
    );
    const runDir = path.join(run.dataDir, 'run');
    const socketName = (await readdir(runDir)).find((name) => name.startsWith('egress-'));
    expect(socketName).toBeDefined();
    const socketPath = path.join(runDir, socketName!);
    const descriptors = async () => (await readdir('/proc/self/fd')).length;
    const before = await descriptors();
    // The socket is the one bound into the sandbox: the agent's programs connect to it as this test does.
    let refused = 0;
    let refusal = '';
    const held: net.Socket[] = [];
    cleanups.push(() => held.forEach((socket) => socket.destroy()));
    const open = () =>
      new Promise<void>((connected) => {
        const socket = net.connect(socketPath);
        socket.on('connect', () => {
          held.push(socket);
          connected();
        });
        socket.on('data', (chunk: Buffer) => {
          refused += 1;
          refusal ||= chunk.toString();
          held.splice(held.indexOf(socket), 1);
          socket.destroy();
        });
        // A full accept queue refuses a connect (EAGAIN): that attempt is made again.
        socket.on('error', () => setTimeout(() => void open().then(connected), 20));
      });
    for (let wave = 0; wave < 40; wave++) await Promise.all(Array.from({ length: 200 }, open));
    for (let waited = 0; refused < 8000 - 64 && waited < 30_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(refused).toBe(8000 - 64);
    expect(refusal).toMatch(/^HTTP\/1\.1 503 Service Unavailable/);
    expect(refusal).toContain('this agent already has 64 connections open through its proxy');
    expect(held).toHaveLength(64);
    // The box's side holds 64; with the test's own 64, far below the 16,000 the flood would have taken.
    expect((await descriptors()) - before).toBeLessThan(400);
    const response = await fetch(new URL('api/listAgents', run.gateway.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${run.gateway.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    // A connection freed is a connection the agent can open again.
    held.pop()?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = net.connect(socketPath);
    cleanups.push(() => void again.destroy());
    const answer = await new Promise<string>((done) => {
      again.on('connect', () => again.write('CONNECT not-allowed.invalid:443 HTTP/1.1\r\n\r\n'));
      again.on('data', (chunk: Buffer) => done(chunk.toString()));
    });
    expect(answer).not.toContain('503');
  }, 120_000);

  it('matches domains and subdomains, and refuses loopback, link-local and unspecified addresses', () => {
    expect(domainAllowed('api.github.com', ['github.com'])).toBe(true);
    expect(domainAllowed('GitHub.com.', ['github.com'])).toBe(true);
    expect(domainAllowed('evilgithub.com', ['github.com'])).toBe(false);
    expect(domainAllowed('anything.example', [])).toBe(false);
    for (const address of [
      '127.0.0.1',
      '127.9.9.9',
      '0.0.0.0',
      '169.254.169.254',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      'fe80::1',
    ]) {
      expect(isLocalAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '2606:2800:220:1::248', '10.1.2.3'])
      expect(isLocalAddress(address)).toBe(false);
  });

  it('with "*", reaches public addresses only: a private one needs its name listed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-egress-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    // lan.test plays a host on the LAN at 127.0.0.2 (not public; reachable when named).
    const lan = net.createServer((socket) => socket.end());
    await new Promise<void>((listening) => lan.listen(0, '127.0.0.2', listening));
    cleanups.push(() => new Promise<void>((closed) => lan.close(() => closed())));
    const port = (lan.address() as net.AddressInfo).port;
    const options: EgressProxyOptions = {
      network: {
        resolve: () => Promise.resolve([{ address: '127.0.0.2', family: 4 }]),
        kindOf: (address) => (address === '127.0.0.2' ? 'private' : addressKind(address)),
      },
    };
    const ask = async (allowDomains: string[]) => {
      const proxy = await EgressProxy.start(path.join(dir, 'p.sock'), { allowDomains }, options);
      try {
        return await new Promise<string>((done, fail) => {
          const socket = net.connect(proxy.socketPath, () =>
            socket.write(`CONNECT lan.test:${port} HTTP/1.1\r\n\r\n`),
          );
          let answer = '';
          socket.on('data', (chunk: Buffer) => {
            answer += chunk.toString();
            if (answer.includes('\r\n\r\n')) socket.destroy();
          });
          socket.on('close', () => done(answer));
          socket.on('error', fail);
        });
      } finally {
        await proxy.close();
      }
    };
    const wildcard = await ask(['*']);
    expect(wildcard).toContain('403 Forbidden');
    expect(wildcard).toContain('needs its name listed');
    expect(await ask(['lan.test'])).toContain('200 Connection Established');
  });
});

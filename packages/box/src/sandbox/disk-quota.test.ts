/**
 * The disk quota per sandbox (docs/sandbox.md, "Disk"): what a folder holds,
 * and the real box on a small filesystem of its own (a tmpfs, or an ext4 image
 * on a loop device, that the test mounts: this takes root) with one agent
 * trying to fill it. The gateway's getStatus is asked who holds the disk.
 */
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentFiles, boxAgentFolders } from '../gateway/files.ts';
import { startGateway, type RunningGateway } from '../gateway/server.ts';
import { makeWebRoot } from '../gateway/test-support.ts';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { HostError } from '../agent/errors.ts';
import { scriptedProvider, type ScriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { lastToolOutputs } from '../testing/host-fixture.ts';
import { folderUsage } from './disk-quota.ts';

const MiB = 1024 ** 2;
const asRoot = process.getuid?.() === 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-disk-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('what a sandbox folder holds', () => {
  it('counts blocks in use, a hard-linked file once, and nothing a link points to', async () => {
    const dir = await tempDir();
    const outside = await tempDir();
    await writeFile(path.join(outside, 'big.bin'), Buffer.alloc(4 * MiB, 1));
    const empty = await folderUsage(dir);
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sub', 'a.bin'), Buffer.alloc(MiB, 1));
    await link(path.join(dir, 'sub', 'a.bin'), path.join(dir, 'a-again.bin'));
    await symlink(path.join(outside, 'big.bin'), path.join(dir, 'to-big'));
    await symlink(outside, path.join(dir, 'to-outside'));
    const used = (await folderUsage(dir)) - empty;
    expect(used).toBeGreaterThanOrEqual(MiB);
    expect(used).toBeLessThan(MiB + 64 * 1024);
  });
});

/**
 * A box whose data dir is on a filesystem of `sizeMiB` (tmpfs, or ext4 with 10 % kept for root
 * as on a real disk), its gateway up, and two agents.
 */
async function boxOnSmallDisk(kind: 'tmpfs' | 'ext4', sizeMiB: number, quotaBytes?: number) {
  const mount = await tempDir();
  if (kind === 'tmpfs') {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', mount]);
  } else {
    const image = path.join(await tempDir(), 'disk.img');
    execFileSync('truncate', ['-s', `${sizeMiB}M`, image]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-m', '10', image]);
    execFileSync('mount', ['-o', 'loop', image, mount]);
  }
  cleanups.push(() => void execFileSync('umount', ['-l', mount]));
  const dataDir = path.join(mount, 'data');
  const model: ScriptedProvider = scriptedProvider([]);
  const host: LocalAgentHost = await createAgentHost({
    dataDir,
    provider: model,
    env: {},
    sendReminderEvery: 100,
    ...(quotaBytes === undefined ? {} : { sandbox: { diskQuotaBytes: quotaBytes } }),
  });
  cleanups.push(() => host.close());
  const webRoot = await makeWebRoot();
  cleanups.push(() => rm(webRoot, { recursive: true, force: true }));
  const gateway: RunningGateway = await startGateway({
    host,
    files: agentFiles(host, boxAgentFolders(dataDir)),
    dataDir,
    webRoot,
    version: '0.0.0-test',
    port: 0,
  });
  cleanups.push(() => gateway.close());
  const a = await host.createAgent({ name: 'Disk filler' });
  const b = await host.createAgent({ name: 'Bystander' });
  let nonce = 0;
  /** One turn of the agent making `calls` one at a time; returns what each returned. */
  const turn = async (agentId: string, calls: NonNullable<ScriptedStep['toolCalls']>) => {
    const first = model.requests.length;
    model.push(
      ...calls.map((call) => ({ toolCalls: [call] })),
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'done' } }] },
      {},
    );
    await host.sendPrompt({ agentId, prompt: 'go', clientNonce: `disk-${++nonce}` });
    await host.idle(agentId);
    return calls.map((_, i) => lastToolOutputs(model, first + i + 1)[0] ?? '');
  };
  const status = async () => {
    const response = await fetch(new URL('api/getStatus', gateway.url), {
      method: 'POST',
      headers: { Authorization: `Bearer ${gateway.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { sandbox: { disk: DiskView } }).sandbox.disk;
  };
  return { host, dataDir, a, b, turn, status };
}

interface DiskView {
  quotaBytes: number;
  full: boolean;
  freeBytes: number;
  holders: Array<{ agentId: string; name: string | null; bytes: number; overQuota: boolean }>;
}

const shell = (command: string) => ({ name: 'shell', input: { command } });
const write = (file: string, content: string) => ({ name: 'write', input: { path: file, content } });

describe.runIf(asRoot)('one agent filling the disk (as root: a tmpfs of its own)', () => {
  it('is stopped at its quota, refused further writes, told why, and named by getStatus; others keep writing', async () => {
    const scene = await boxOnSmallDisk('tmpfs', 64, 8 * MiB);
    // 1 MiB at a time, as a build or a download would: the box's check stops it near 8 MiB.
    const fill =
      'for i in $(seq 1 40); do head -c 1048576 /dev/zero > f$i || break; sleep 0.1; done; echo "fin""ished"';
    const [filled, written, appended] = await scene.turn(scene.a.id, [
      shell(fill),
      write('notes.txt', 'more'),
      shell('head -c 10 /dev/zero >> f1 && echo "app""ended"'),
    ]);
    expect(filled).not.toContain('finished');
    expect(filled).toMatch(
      /sendbox: stopped: your sandbox folder grew to [\d.]+ MiB, over its quota of 8\.0 MiB/,
    );
    expect(written).toMatch(/Not written: your sandbox folder holds [\d.]+ MiB and its quota is 8\.0 MiB/);
    expect(appended).not.toContain('appended');
    expect(appended).toMatch(/File size limit exceeded/);
    expect(appended).not.toContain('sendbox-sandbox:'); // the supervisor says nothing of its own
    expect(appended).toContain('over its quota of 8.0 MiB: writing files fails until you delete some');
    // Well short of the 64 MiB the loop would have written.
    expect(await folderUsage(agentPaths(scene.dataDir, scene.a.id).sandbox)).toBeLessThan(24 * MiB);

    const disk = await scene.status();
    expect(disk.quotaBytes).toBe(8 * MiB);
    expect(disk.holders).toEqual([
      expect.objectContaining({ agentId: scene.a.id, name: 'Disk filler', overQuota: true }),
    ]);
    // An upload into the full sandbox is refused with the gateway's 507, saying why.
    const upload = await scene.host
      .uploadFile({ agentId: scene.a.id, fileName: 'big.bin', bytes: Buffer.alloc(MiB) })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(upload).toBeInstanceOf(HostError);
    expect((upload as HostError).status).toBe(507);
    expect((upload as HostError).message).toMatch(/big\.bin \(1\.0 MiB\) would exceed it/);

    // The other agent still has its own room.
    const [other] = await scene.turn(scene.b.id, [
      shell('head -c 2097152 /dev/zero > two.bin && echo wrote-two'),
    ]);
    expect(other).toContain('wrote-two');

    // Deleting lifts the refusal.
    const [cleaned, after] = await scene.turn(scene.a.id, [
      shell('rm f*; echo cleaned'),
      shell('echo ok > ok.txt && cat ok.txt'),
    ]);
    expect(cleaned).toContain('cleaned');
    expect(after).toContain('ok');
    expect(after).not.toContain('over its quota');
    expect((await scene.status()).holders).toEqual([]);
  }, 120_000);

  it('when the disk fills anyway (a quota larger than the disk), getStatus says it is full and names the agent', async () => {
    // ext4 keeps its last 10 % for root: the agent's uid cannot take it, the box's writes can.
    const scene = await boxOnSmallDisk('ext4', 48, 1024 * MiB);
    const [filled] = await scene.turn(scene.a.id, [
      shell('head -c 67108864 /dev/zero > big.bin; echo exit=$?'),
    ]);
    // The model is told either way: by the write that failed, or by the box's check stopping the
    // command first (it reads the free space every 250 ms, and a loaded machine slows the write).
    expect(filled).toMatch(/No space left on device|sendbox: stopped: the disk is full/);
    const disk = await scene.status();
    expect(disk.full).toBe(true);
    expect(disk.holders[0]).toMatchObject({ agentId: scene.a.id, name: 'Disk filler', overQuota: false });
    expect(disk.holders[0]!.bytes).toBeGreaterThan(16 * MiB);
    expect(disk.holders.map((holder) => holder.agentId)).not.toContain(scene.b.id);
  }, 120_000);
});

/**
 * A full disk is 507 on every path that writes, folders included, and a new agent that could
 * not be written leaves nothing behind. The disk is a real tmpfs of a few MiB, mounted in a
 * mount namespace of the test's own (test-full-disk-child.ts), filled first to its last block
 * (mkdir still works, file writes fail) and then to its last inode (mkdir fails too).
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CHILD = path.join(import.meta.dirname, 'test-full-disk-child.ts');
const MOUNT = '/mnt';

function inSmallDisk(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // A user namespace (no root needed) with its own mounts; the tmpfs lives and dies with it.
  const script = `mount -t tmpfs -o size=4m,nr_inodes=2000 tmpfs ${MOUNT} && exec "$0" --import tsx "$1"`;
  const child = spawn(
    'unshare',
    ['--map-root-user', '--mount', '--', 'sh', '-c', script, process.execPath, CHILD],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: MOUNT } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const probe = spawnSync('unshare', ['--map-root-user', '--mount', '--', 'true']);
if (probe.error || probe.status !== 0) {
  // Not a skip: the machine lacks what the suite needs, and .ci/run installs it.
  throw new Error(
    `full-disk.test.ts needs unprivileged user namespaces (util-linux unshare): ${probe.stderr.toString().trim()}`,
  );
}

type Answer = { status: number; error?: string };
type Full = Record<'createAgent' | 'duplicateAgent' | 'sendPrompt' | 'setModelSettings', Answer> & {
  left: { agents: string[]; transcripts: string[]; sandboxes: string[] };
  free: { blocks: number; inodes: number };
};

describe('a full disk', () => {
  it('answers 507 saying what was not saved for new agents, copies, prompts and settings; leaves no half agent; works again once space returns', async () => {
    const run = await inSmallDisk();
    expect(run.code, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as {
      before: Full['left'];
      blocksFull: Full;
      inodesFull: Full;
      freed: { createAgent: Answer; duplicateAgent: Answer; agents: number };
      errorLog: string[];
    };
    for (const [when, full] of [
      ['blocks', seen.blocksFull],
      ['inodes', seen.inodesFull],
    ] as const) {
      // The disk really is full as the phase says: no block left, and inodes only in the first.
      expect(full.free.blocks, when).toBe(0);
      if (when === 'blocks') expect(full.free.inodes, when).toBeGreaterThan(0);
      else expect(full.free.inodes, when).toBe(0);
      expect(full.createAgent.status, when).toBe(507);
      expect(full.createAgent.error, when).toMatch(
        /^the disk of the data dir is full, so the new agent "Second" was not saved \(ENOSPC\); free some space and try again$/,
      );
      expect(full.duplicateAgent.status, when).toBe(507);
      expect(full.duplicateAgent.error, when).toMatch(/so the copy of agent [0-9a-f-]+ was not saved/);
      expect(full.sendPrompt.status, when).toBe(507);
      expect(full.setModelSettings.status, when).toBe(507);
      expect(full.setModelSettings.error, when).toMatch(
        /^the disk of the data dir is full, so \/api\/setModelSettings was not done \(ENOSPC\)/,
      );
      // Nothing of the agents that failed: no folder, transcript or sandbox.
      expect(full.left, when).toEqual(seen.before);
    }
    expect(seen.freed.createAgent.status).toBe(200);
    expect(seen.freed.duplicateAgent.status).toBe(200);
    expect(seen.freed.agents).toBe(3);
    // A full disk is not a fault of the box: nothing for the error log.
    expect(seen.errorLog).toEqual([]);
  }, 120_000);
});

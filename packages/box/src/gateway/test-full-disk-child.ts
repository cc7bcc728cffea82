/**
 * Runs with a small tmpfs of its own as TMPDIR (started by full-disk.test.ts inside
 * `unshare --map-root-user --mount`), so the test can fill a real filesystem without
 * touching the machine's. It fills the disk (blocks only, then inodes too), calls every
 * gateway method that makes folders or saves files, frees the space and tries again.
 * Prints one JSON line of what it saw; the test judges it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

const mount = os.tmpdir();

/** Writes files of each size in turn until the filesystem refuses one; returns their paths. */
function fill(prefix: string, sizes: number[]): string[] {
  const made: string[] = [];
  for (const size of sizes) {
    const data = Buffer.alloc(size);
    for (;;) {
      const file = path.join(mount, `${prefix}-${made.length}`);
      try {
        fs.writeFileSync(file, data);
        made.push(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        fs.rmSync(file, { force: true });
        break;
      }
    }
  }
  return made;
}

const box = await startTestBox(testModel());
const agents = (): string[] => fs.readdirSync(path.join(box.dataDir, 'agents')).sort();
const transcripts = (): string[] => fs.readdirSync(path.join(box.dataDir, 'agent-transcripts')).sort();
const sandboxes = (): string[] => fs.readdirSync(path.join(box.dataDir, 'sandboxes')).sort();

type Answer = { status: number; error?: string };
const answer = async (method: string, body: unknown): Promise<Answer> => {
  const { status, body: json } = await box.call(method, body);
  return { status, ...(status === 200 ? {} : { error: (json as { error: string }).error }) };
};

const first = (await box.call('createAgent', { name: 'First' })).body as { agent: { id: string } };
const agentId = first.agent.id;
const before = { agents: agents(), transcripts: transcripts(), sandboxes: sandboxes() };

const filler: string[] = [];
/**
 * Fills the disk again right before each call: a refused write that was rolled back (a new
 * agent's folder, say) frees what it had taken, and the next call must meet a full disk too.
 */
async function whenFull(sizes: number[], method: string, body: unknown): Promise<Answer> {
  filler.push(...fill(`fill${filler.length}`, sizes));
  return answer(method, body);
}

async function whileFull(sizes: number[]): Promise<Record<string, unknown>> {
  filler.push(...fill(`fill${filler.length}`, sizes));
  const { bfree, ffree } = fs.statfsSync(mount);
  return {
    free: { blocks: bfree, inodes: ffree },
    createAgent: await whenFull(sizes, 'createAgent', { name: 'Second' }),
    duplicateAgent: await whenFull(sizes, 'duplicateAgent', { id: agentId }),
    sendPrompt: await whenFull(sizes, 'sendPrompt', {
      agentId,
      prompt: 'say:hi',
      clientNonce: `n-${Date.now()}`,
    }),
    setModelSettings: await whenFull(sizes, 'setModelSettings', {
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:9/v1',
      model: 'm',
      apiKey: 'k',
    }),
    left: { agents: agents(), transcripts: transcripts(), sandboxes: sandboxes() },
  };
}

// Every block (a smaller write may still fit after a big one fails), then every inode.
const blocksFull = await whileFull([256 * 1024, 4096, 1]);
const inodesFull = await whileFull([256 * 1024, 4096, 1, 0]);
for (const file of filler) fs.rmSync(file);
const freed = {
  createAgent: await answer('createAgent', { name: 'Third' }),
  duplicateAgent: await answer('duplicateAgent', { id: agentId }),
  agents: agents().length,
};
const errorLog = [...box.errorLog];
await box.close();
console.log(JSON.stringify({ before, blocksFull, inodesFull, freed, errorLog }));

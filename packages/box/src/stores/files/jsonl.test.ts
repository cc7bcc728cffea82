import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { CHILD_A, childTranscriptContract, transcriptContract } from '../transcript.contract.ts';
import { fileChildTranscripts } from './agent-stores.ts';
import { filesBackend } from './backend.ts';
import { JsonlFile } from './jsonl.ts';
import { agentPaths } from './layout.ts';

transcriptContract(
  'files',
  filesBackend((home) => {
    const file = path.join(home, 'agent.jsonl');
    return { open: () => new JsonlFile(file), close: (log) => log.close() };
  }),
);

transcriptContract(
  'files, a subagent',
  filesBackend((home) => ({ open: () => fileChildTranscripts(home)(CHILD_A), close: (log) => log.close() })),
);

childTranscriptContract(
  'files',
  filesBackend((home) => ({
    open: () => ({
      own: () => new JsonlFile(agentPaths(home, 'parent').jsonl),
      child: fileChildTranscripts(home),
    }),
    close: () => undefined,
  })),
);

it("writes a subagent's lines to agent-transcripts/<child>/<child>.jsonl, byte for byte, as Grok Bot keeps them", async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'sendbox-child-jsonl-'));
  try {
    const log = await fileChildTranscripts(home)(CHILD_A);
    log.append('{"role":"user"}\n');
    log.close();
    const file = path.join(home, 'agent-transcripts', CHILD_A, `${CHILD_A}.jsonl`);
    expect(await readFile(file, 'utf8')).toBe('{"role":"user"}\n');
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

it("reads and closes a subagent's log that was never written without making its folder", async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'sendbox-child-jsonl-'));
  try {
    const log = await fileChildTranscripts(home)(CHILD_A);
    expect(await log.read()).toBe('');
    expect(log.unchanged()).toBe(true);
    log.close();
    await expect(stat(path.join(home, 'agent-transcripts', CHILD_A))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

/**
 * A routine fires exactly once across a SIGKILL at the fire (issue 21 item 2): a real box process
 * (test-fire-crash.ts) is killed at each point of the fire, from the inbox commit to the run's first
 * model call; a new box on the same data dir, its clock half a minute later, then gives exactly one
 * run of that instant (one hidden prompt in the JSONL, one user entry, one run in the history,
 * ended; a run whose turn had started goes on where it was cut), and the next minute's fire comes on
 * time.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BOX_STOPPED_NOTICE } from '../agent/turn-texts.ts';
import { TURN_RESUMED_NOTE } from '../agent/turn-resume.ts';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { until } from '../testing/processes.ts';
import { SteppedClock } from './test-clock.ts';

const CHILD = fileURLToPath(new URL('./test-fire-crash.ts', import.meta.url));
const START = Date.UTC(2026, 5, 1, 12, 0, 0);
const FIRE = START + 60_000;
const HIDDEN_RUN = '[SAND_HIDDEN_PROMPT][routine] Tick';

let host: LocalAgentHost | undefined;
let dataDir = '';
afterEach(async () => {
  await host?.close();
  host = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = '';
});

/** Runs the dying box to its death at `phase`; returns what it printed first. */
async function crashAt(phase: string): Promise<{ agentId: string; routineId: string }> {
  const box = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, phase], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  box.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  box.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    box.once('exit', (_code, sig) => resolve(sig)),
  );
  expect(stdout, stderr).not.toContain('survived');
  expect(signal, `the box was to die at ${phase}: ${stderr}`).toBe('SIGKILL');
  return JSON.parse(stdout.split('\n')[0]!) as { agentId: string; routineId: string };
}

/** JSONL user records holding the routine's hidden prompt. */
async function hiddenRuns(agentId: string): Promise<number> {
  return userRecordsWith(agentId, HIDDEN_RUN);
}

/** JSONL notes telling the model its turn was cut and goes on. */
async function resumedNotes(agentId: string): Promise<number> {
  return userRecordsWith(agentId, TURN_RESUMED_NOTE);
}

async function userRecordsWith(agentId: string, marker: string): Promise<number> {
  const text = await readFile(agentPaths(dataDir, agentId).jsonl, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      const record = JSON.parse(line) as { role: string; message?: { content?: Array<{ text?: string }> } };
      return record.role === 'user' && (record.message?.content ?? []).some((b) => b.text?.includes(marker));
    }).length;
}

describe('a routine across a SIGKILL at its fire', () => {
  it.each([
    // Before the run's user entry commits: the fire is pending (or fired again) and runs once.
    ['inbox', 'no'],
    ['ledger', 'no'],
    // The fire is on disk in the inbox and its turn started as the row committed: the turn ended
    // before the kill, or goes on where it was cut; either way it is not run again.
    ['routine', 'maybe'],
    // The run's turn had started: it goes on where it was cut, as any cut turn (agent/turn-resume.ts).
    ['inbox:2', 'yes'],
    ['jsonl', 'yes'],
    ['model', 'yes'],
  ])(
    'killed at %s: exactly one run of the instant after the restart (resumed: %s)',
    async (phase, resumed) => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-fire-crash-'));
      const { agentId, routineId } = await crashAt(phase);
      const model = scriptedProvider((request) =>
        request.messages.at(-1)?.role === 'tool'
          ? {}
          : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'tick done' } }] },
      );
      const clock = new SteppedClock(FIRE + 30_000);
      host = await createAgentHost({
        dataDir,
        provider: model,
        env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' },
        routineClock: clock,
      });
      const settled = async () => {
        await host!.idle(agentId);
        const [routine] = await host!.listRoutines(agentId);
        return (
          (await host!.pendingInputs(agentId)).length === 0 &&
          routine!.runs.every((run) => run.endedAt !== null)
        );
      };
      await until(settled, 'the recovered run to end');

      const users = (await host.entriesAfter(agentId, 0)).filter(
        (e) => e.kind === 'message' && e.role === 'user',
      );
      expect(users).toEqual([
        expect.objectContaining({
          hidden: true,
          routine: expect.objectContaining({ id: routineId, instant: FIRE }) as unknown,
        }),
      ]);
      expect(await hiddenRuns(agentId)).toBe(1);
      const cut = (await host.entriesAfter(agentId, 0)).some(
        (e) => e.kind === 'notice' && e.text === BOX_STOPPED_NOTICE,
      );
      expect(cut).toBe(false);
      const notes = await resumedNotes(agentId);
      if (resumed === 'maybe') expect(notes).toBeLessThanOrEqual(1);
      else expect(notes).toBe(resumed === 'yes' ? 1 : 0);
      const [routine] = await host.listRoutines(agentId);
      expect(routine!.runs).toEqual([
        expect.objectContaining({ instant: FIRE, status: 'ok', turn: 0, entryId: 't0u', missed: 1 }),
      ]);
      expect(routine!.runs[0]!.startedAt).not.toBeNull();
      expect(routine!.runs[0]!.endedAt).toBeGreaterThanOrEqual(routine!.runs[0]!.startedAt!);
      expect(routine!.nextRunAt).toBe(FIRE + 60_000);
      // The run was answered after the restart, from its start or where it was cut; one that
      // ended before the kill ('routine') was not run again.
      expect(model.requests.length > 0).toBe(resumed !== 'maybe' || notes === 1);

      // The schedule goes on: the next minute is one more run, not a repeat of 12:01.
      await clock.advanceTo(FIRE + 60_000);
      await until(settled, 'the next run to end');
      const [after] = await host.listRoutines(agentId);
      expect(after!.runs.map((run) => run.instant)).toEqual([FIRE + 60_000, FIRE]);
      expect(await hiddenRuns(agentId)).toBe(2);
    },
    120_000,
  );
});

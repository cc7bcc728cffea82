/**
 * The write order and recovery, in process: a box that "dies" at a write
 * (every write from then on fails, as if the process were gone) leaves files
 * the next box on the data dir must recover from; a full disk mid-turn
 * closes the turn at once and the agent works again once space returns.
 * The crash harness (test/crash-harness.test.ts) does the same with SIGKILL.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { grokBot } from '@sendbox/txcript';
import type { ModelMessage, ModelProvider } from '../providers/types.ts';
import { scriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { hostFixture, lastUserText, type HostFixture } from '../testing/host-fixture.ts';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { BOX_STOPPED_NOTICE } from './turn-texts.ts';
import { MAX_TURN_RESUMES, TURN_RESUMED_NOTE } from './turn-resume.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { INTERRUPTED_CALL_RESULT } from './turn-closer.ts';
import { StoreWriteError } from '../stores/errors.ts';
import { AcceptsFirst } from './accepts-first.ts';
import { type SequencedEntry } from '../stores/ledger.ts';
import { diskFullError, WritePoints } from '../stores/write-points.ts';

let fx: HostFixture | undefined;
let second: LocalAgentHost | undefined;
afterEach(async () => {
  await second?.close();
  second = undefined;
  await fx?.dispose();
  fx = undefined;
});

const send = (content: string) => ({ name: 'send_message', input: { type: 'text', content } });
const ids = (entries: SequencedEntry[]) => entries.map((e) => e.id);

/** Write points that fail every write from the moment `die()` is called, as if the process were gone. */
function mortal() {
  let dead = false;
  const points = new WritePoints({ fail: (store) => (dead ? diskFullError(store) : null) });
  return { points, die: () => (dead = true) };
}

/** Every tool_use of the JSONL has a tool_result (matched by name, in order, as the readers do). */
function unansweredCalls(records: Array<Record<string, unknown>>): string[] {
  const open: string[] = [];
  for (const record of records) {
    const content =
      (record.message as { content?: Array<Record<string, unknown>> } | undefined)?.content ?? [];
    for (const block of content) {
      if (block.type === 'tool_use') open.push(String(block.name));
      if (block.type === 'tool_result') open.splice(open.indexOf(String(block.name)), 1);
    }
  }
  return open;
}

/** Every tool call the model was shown has a result in the same request. */
function callsWithoutResult(messages: readonly ModelMessage[]): string[] {
  const calls = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant' && Array.isArray(message.content)) {
      for (const part of message.content) if (part.type === 'tool-call') calls.add(part.toolCallId);
    }
    if (message.role === 'tool')
      for (const part of message.content) if (part.type === 'tool-result') calls.delete(part.toolCallId);
  }
  return [...calls];
}

async function reopen(steps: ScriptedStep[]) {
  await fx!.host.close();
  const model = scriptedProvider(steps);
  second = await createAgentHost({ dataDir: fx!.dataDir, provider: model, env: {} });
  await second.idle(fx!.agentId);
  const entries = await second.entriesAfter(fx!.agentId, 0);
  return { model, entries };
}

describe('the durable inbox', () => {
  it('keeps accepted prompts across a crash and answers them in order on the next start; the cut turn goes on first', async () => {
    const box = mortal();
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const script = scriptedProvider([{ toolCalls: [send('never delivered')] }]);
    // The box dies while the model thinks about the first prompt, once all three are accepted.
    const model: ModelProvider = {
      provider: 'scripted',
      model: 'gated',
      step: async (request) => {
        await gate;
        box.die();
        return script.step(request);
      },
    };
    fx = await hostFixture([], { provider: model, writePoints: box.points });
    const agentId = fx.agentId;
    for (const [i, text] of ['one', 'two', 'three'].entries()) {
      expect(await fx.host.sendPrompt({ agentId, prompt: text, clientNonce: `n${i}` })).toEqual({
        accepted: true,
        duplicate: false,
      });
    }
    expect((await fx.host.pendingInputs(agentId)).map((p) => p.text)).toEqual(['two', 'three']);
    release();
    await fx.host.idle(agentId);

    const next = await reopen([
      { toolCalls: [send('re: one')] },
      {},
      { toolCalls: [send('re: two')] },
      {},
      { toolCalls: [send('re: three')] },
      {},
    ]);
    const { entries } = next;
    // Turn 0 goes on where it was cut (the model had not answered yet): no notice, its reply, its end.
    expect(ids(entries)).toEqual(['t0u', 't0s0', 't0e', 't1u', 't1s0', 't1e', 't2u', 't2s0', 't2e']);
    expect(entries.filter((entry) => entry.kind === 'notice')).toEqual([]);
    const userTexts = next.model.requests.map((r) => {
      const last = r.messages.filter((m) => m.role === 'user').at(-1);
      return Array.isArray(last?.content) ? (last.content[0] as { text: string }).text : '';
    });
    expect(userTexts[0]).toBe(TURN_RESUMED_NOTE);
    expect(JSON.stringify(next.model.requests[0]!.messages)).toContain('[t0u]\\none');
    expect(userTexts[2]).toBe('[t1u]\ntwo');
    expect(userTexts[4]).toBe('[t2u]\nthree');
    for (const request of next.model.requests) expect(callsWithoutResult(request.messages)).toEqual([]);
    expect(await second!.pendingInputs(agentId)).toEqual([]);
    // The nonces are kept: a repeat after the restart is a duplicate, not a fourth turn.
    expect(await second!.sendPrompt({ agentId, prompt: 'two', clientNonce: 'n1' })).toMatchObject({
      duplicate: true,
    });
    expect(unansweredCalls(await fx.records())).toEqual([]);
  });

  it('holds a prompt back while the ledger cannot take its user message: the model never sees it, it stays pending, then runs', async () => {
    let failures = 1;
    const points = new WritePoints({
      fail: (store, what) =>
        store === 'ledger' && what === 't0u' && failures-- > 0 ? diskFullError(store) : null,
    });
    // The retry comes late enough that a loaded machine still sees the input pending before it.
    fx = await hostFixture([{ toolCalls: [send('hi')] }, {}], { writePoints: points, inboxRetryMs: 1500 });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'hello', clientNonce: 'p1' });
    await fx.host.idle(fx.agentId);
    // The failed start wrote nothing the model reads, and the input is visibly pending.
    expect((await fx.host.pendingInputs(fx.agentId)).map((p) => p.nonce)).toEqual(['p1']);
    expect(fx.model.requests).toHaveLength(0);
    await expect(fx.jsonlText()).rejects.toThrow(/ENOENT/);
    await vi.waitFor(async () => expect(ids(await fx!.entries())).toEqual(['t0u', 't0s0', 't0e']), {
      timeout: 15_000,
      interval: 100,
    });
    await fx.host.idle(fx.agentId);
    expect(await fx.host.pendingInputs(fx.agentId)).toEqual([]);
  });
});

describe('an error outside every turn', () => {
  it('is told on the box log, and the input waits and runs on the next try instead of never', async () => {
    const lines: string[] = [];
    let failures = 1;
    // What runs before a turn starts fails once (in a cluster: uploads out of reach).
    class FailingOnce extends AcceptsFirst {
      override quiet(): Promise<void> | null {
        return failures-- > 0 ? Promise.reject(new TypeError('the hold broke')) : null;
      }
    }
    fx = await hostFixture([{ toolCalls: [send('hi')] }, {}], {
      inboxRetryMs: 300,
      acceptsFirst: new FailingOnce(),
      log: (line) => lines.push(line),
    });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'hello', clientNonce: 'p1' });
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(lines[0]).toBe(
      `sendbox: agent ${fx.agentId}: its inputs wait, tried again in 300 ms: the hold broke`,
    );
    expect((await fx.host.pendingInputs(fx.agentId)).map((p) => p.nonce)).toEqual(['p1']);
    await vi.waitFor(
      async () => expect((await fx!.entries()).some((entry) => entry.kind === 'send-message')).toBe(true),
      { timeout: 10_000 },
    );
    expect(await fx.host.pendingInputs(fx.agentId)).toEqual([]);
    expect(lines).toHaveLength(1);
  });
});

describe('one write order: the ledger commits a send before the model hears it was delivered', () => {
  it('a send whose ledger entry fails is not delivered: the JSONL and the model get an interrupted result', async () => {
    let failures = 1;
    const points = new WritePoints({
      fail: (store, what) =>
        store === 'ledger' && what === 't0s0' && failures-- > 0 ? diskFullError(store) : null,
    });
    fx = await hostFixture([{ toolCalls: [send('lost')] }], { writePoints: points });
    await fx.prompt('go');
    const entries = await fx.entries();
    expect(ids(entries)).toEqual(['t0u', 't0n0', 't0e']);
    expect(entries[1]).toMatchObject({ level: 'error' });
    expect((entries[1] as { text: string }).text).toMatch(
      /could not save this turn.*disk of the data dir is full/,
    );
    const text = await fx.jsonlText();
    expect(text).not.toContain('"success"');
    expect(text).toContain(INTERRUPTED_CALL_RESULT);
    expect(unansweredCalls(await fx.records())).toEqual([]);
  });

  it('a send whose ledger entry committed before the box died is delivered: the next start gives the model its success', async () => {
    // The send's ledger commit is the last write that lands.
    let committed = false;
    const points = new WritePoints({
      fail: (store, what) => {
        if (committed) return diskFullError(store);
        if (store === 'ledger' && what === 't0s0') committed = true;
        return null;
      },
    });
    fx = await hostFixture([{ toolCalls: [send('made it')] }], { writePoints: points });
    await fx.prompt('go');
    // The turn goes on: the model reads the send's success, and a step without calls ends the turn
    // (a send was delivered, so no reminder and no "no reply" notice).
    const { model, entries } = await reopen([{}]);
    expect(ids(entries)).toEqual(['t0u', 't0s0', 't0e']);
    const records = await fx.records();
    expect(unansweredCalls(records)).toEqual([]);
    expect(await fx.jsonlText()).toContain('"messageId":"t0s0"');
    expect(model.requests).toHaveLength(1);
    const tool = model.requests[0]!.messages.find((m) => m.role === 'tool');
    expect(JSON.stringify(tool)).toContain('Message sent to user. (id: t0s0)');
  });
});

describe('a turn cut by a dead box goes on (turn-resume.ts)', () => {
  const shell = (command: string) => ({ name: 'shell', input: { command } });
  /** The shell call a box dies in: it leaves `started` in the sandbox, then runs for a second. */
  const cutting = shell('touch started && sleep 1');

  /** Starts turn 0 (or goes on with it) on `host`, and kills the box's writes once the cutting call runs. */
  async function dieInShell(host: LocalAgentHost, die: () => void, prompt: boolean): Promise<void> {
    const started = path.join(agentPaths(fx!.dataDir, fx!.agentId).sandbox, 'started');
    await rm(started, { force: true });
    if (prompt) await host.sendPrompt({ agentId: fx!.agentId, prompt: 'go', clientNonce: 'go' });
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 30_000, interval: 50 });
    die();
    await host.idle(fx!.agentId);
  }

  it('gives the cut call its "interrupted" result, tells the model, and goes on: ids after the ledger\'s, sends made before the cut never twice', async () => {
    const box = mortal();
    fx = await hostFixture(
      [
        { text: 'first look', toolCalls: [shell('echo one')] },
        { toolCalls: [send('before the cut')] },
        { toolCalls: [cutting] },
      ],
      { writePoints: box.points },
    );
    await dieInShell(fx.host, box.die, true);
    // The cut call has no result and the turn no end.
    expect(ids(await fx.entries())).toEqual(['t0u', 't0a0', 't0c0', 't0s0']);
    expect(unansweredCalls(await fx.records())).toEqual(['shell']);

    const { model, entries } = await reopen([
      {
        text: 'going on',
        toolCalls: [send('before the cut'), shell('echo three'), send('after the cut')],
      },
      {},
    ]);
    // The same turn goes on: its ids continue after the ledger's, the resent message is refused.
    expect(ids(entries)).toEqual(['t0u', 't0a0', 't0c0', 't0s0', 't0a1', 't0c1', 't0s1', 't0e']);
    expect(entries.find((entry) => entry.id === 't0s1')).toMatchObject({
      message: { type: 'text', content: 'after the cut' },
    });
    expect(entries.filter((entry) => entry.kind === 'notice')).toEqual([]);
    // The model read the interrupted result and then the note, where the turn was cut.
    const first = model.requests[0]!.messages;
    expect(JSON.stringify(first.at(-2))).toContain(INTERRUPTED_CALL_RESULT);
    expect(lastUserText(model, 0).startsWith(TURN_RESUMED_NOTE)).toBe(true);
    expect(JSON.stringify(model.requests[1]!.messages.at(-1))).toContain(
      'already delivered in this turn (id: t0s0)',
    );
    const records = await fx.records();
    expect(unansweredCalls(records)).toEqual([]);
    expect(records.filter((record) => JSON.stringify(record).includes('This turn was cut'))).toHaveLength(1);
    expect(await second!.listAgents()).toMatchObject([{ state: 'idle' }]);
  });

  it(`closes a turn cut ${MAX_TURN_RESUMES + 1} times with a notice instead of going on`, async () => {
    const box = mortal();
    fx = await hostFixture([{ toolCalls: [cutting] }], { writePoints: box.points });
    await dieInShell(fx.host, box.die, true);
    await fx.host.close();
    // Each next box goes on with the turn and dies in the same call again.
    for (let resume = 1; resume <= MAX_TURN_RESUMES; resume++) {
      const again = mortal();
      const host = await createAgentHost({
        dataDir: fx.dataDir,
        provider: scriptedProvider([{ toolCalls: [cutting] }]),
        env: {},
        writePoints: again.points,
      });
      await dieInShell(host, again.die, false);
      await host.close();
    }
    const model = scriptedProvider([]);
    second = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    await second.idle(fx.agentId);
    const entries = await second.entriesAfter(fx.agentId, 0);
    expect(model.requests).toHaveLength(0);
    expect(ids(entries)).toEqual(['t0u', 't0n0', 't0e']);
    expect(entries[1]).toMatchObject({ kind: 'notice', level: 'error', text: BOX_STOPPED_NOTICE });
    const records = await fx.records();
    expect(unansweredCalls(records)).toEqual([]);
    expect(records.filter((record) => JSON.stringify(record).includes('This turn was cut'))).toHaveLength(
      MAX_TURN_RESUMES,
    );
  });
});

describe('a full disk', () => {
  it('ends the turn at once, refuses new input with a disk-full error, and the agent works again when space returns, without a restart', async () => {
    let full = false;
    const points = new WritePoints({ fail: (store) => (full ? diskFullError(store) : null) });
    fx = await hostFixture(
      [
        { toolCalls: [{ name: 'shell', input: { command: 'echo one' } }] },
        {
          get toolCalls() {
            full = true; // the disk fills while the model answers
            return [{ name: 'shell', input: { command: 'echo two' } }];
          },
        },
        { toolCalls: [send('back')] },
        {},
      ],
      { writePoints: points },
    );
    await fx.prompt('fill it');
    expect((await fx.host.listAgents())[0]).toMatchObject({ state: 'idle' });
    let refused: unknown;
    try {
      await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'now?', clientNonce: 'full-1' });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(StoreWriteError);
    expect((refused as StoreWriteError).diskFull).toBe(true);
    expect((refused as Error).message).toMatch(/disk of the data dir is full, so the input was not saved/);

    full = false;
    await fx.prompt('space is back');
    const entries = await fx.entries();
    expect(ids(entries)).toEqual(['t0u', 't0c0', 't0n0', 't0e', 't1u', 't1s0', 't1e']);
    expect(entries[2]).toMatchObject({ kind: 'notice', level: 'error' });
    // Nothing half-written: the JSONL parses, and every call has a result, in the files and for the model.
    const parsed = grokBot.text.parse(await fx.jsonlText(), 'jsonl');
    expect(parsed.records.every((line) => line.kind === 'record')).toBe(true);
    expect(unansweredCalls(await fx.records())).toEqual([]);
    expect(callsWithoutResult(fx.model.requests.at(-1)!.messages)).toEqual([]);
  });

  it('answers an upload with a disk-full error (not "too large"), and a repeat of an upload by nonce gets the first entry', async () => {
    let full = true;
    const points = new WritePoints({
      fail: (store) => (full && store === 'upload' ? diskFullError(store) : null),
    });
    fx = await hostFixture([], { writePoints: points });
    const upload = () =>
      fx!.host.uploadFile({
        agentId: fx!.agentId,
        fileName: 'a.txt',
        bytes: Buffer.from('abc'),
        clientNonce: 'u1',
      });
    await expect(upload()).rejects.toMatchObject({ name: 'StoreWriteError', diskFull: true });
    full = false;
    const first = await upload();
    const again = await upload();
    expect(again).toEqual(first);
    expect((await fx.entries()).filter((e) => e.kind === 'user-attachment')).toHaveLength(1);
    expect(await readdir(path.join(fx.sandbox, 'uploads'))).toEqual(['a.txt']);
  });
});

describe('start-up', () => {
  it('removes temp files interrupted ingests and atomic writes left', async () => {
    fx = await hostFixture([]);
    const paths = agentPaths(fx.dataDir, fx.agentId);
    await mkdir(paths.attachments, { recursive: true });
    await mkdir(path.join(paths.sandbox, 'uploads'), { recursive: true });
    const temps = [
      path.join(paths.attachments, '.ingest-0123456789abcdef.tmp'),
      path.join(paths.agentDir, '.profile.json.0123456789ab.tmp'),
      path.join(paths.sandbox, 'uploads', '.report.pdf.0123456789ab.tmp'),
    ];
    for (const file of temps) await writeFile(file, 'partial');
    await writeFile(path.join(paths.sandbox, 'uploads', 'keep.txt'), 'mine');
    await fx.host.close();
    second = await createAgentHost({ dataDir: fx.dataDir, provider: null, env: {} });
    expect(await readdir(paths.attachments)).toEqual([]);
    expect(await readdir(path.join(paths.sandbox, 'uploads'))).toEqual(['keep.txt']);
    expect((await readdir(paths.agentDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('leaves a folder alone that a link planted as uploads/ points to', async () => {
    fx = await hostFixture([]);
    const paths = agentPaths(fx.dataDir, fx.agentId);
    const outside = await mkdtemp(path.join(tmpdir(), 'sendbox-outside-'));
    const victim = path.join(outside, '.keep.me.0123456789ab.tmp');
    await writeFile(victim, 'not the box');
    await mkdir(paths.sandbox, { recursive: true });
    await symlink(outside, path.join(paths.sandbox, 'uploads'));
    await fx.host.close();
    second = await createAgentHost({ dataDir: fx.dataDir, provider: null, env: {} });
    expect(await readdir(outside)).toEqual(['.keep.me.0123456789ab.tmp']);
    await rm(outside, { recursive: true, force: true });
  });
});

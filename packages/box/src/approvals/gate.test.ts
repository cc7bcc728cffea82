/**
 * Approval before a tool runs, through the real box: a profile rule makes `write` ask, the turn
 * waits on the card, and the answer comes through `answerToolApproval`.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentPaths } from '../stores/files/layout.ts';
import { readProfile, writeProfile } from '../stores/files/profile.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { hostFixture, lastUserText, ledgerOnDisk, type HostFixture } from '../testing/host-fixture.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { diskFullError, WritePoints } from '../stores/write-points.ts';
import { approvalNonce, takenApprovalAnswers } from './inbox-answer.ts';
import { TURN_RESUMED_NOTE } from '../agent/turn-resume.ts';
import { approvalSubject, ruleFor } from './policy.ts';

let fx: HostFixture | undefined;
let reopened: LocalAgentHost | undefined;
afterEach(async () => {
  await reopened?.close();
  reopened = undefined;
  await fx?.dispose();
  fx = undefined;
});

const write = (id: string, file: string) => ({
  toolCalls: [{ id, name: 'write', input: { path: file, content: 'hello' } }],
});
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const end = { text: '' };
type Entry = SequencedEntry & Record<string, unknown>;

async function askFor(fixture: HostFixture, rules: Record<string, 'ask' | 'auto'>) {
  const file = agentPaths(fixture.dataDir, fixture.agentId).profile;
  await writeProfile(file, { ...(await readProfile(file)), approvals: rules });
}

async function card(fixture: HostFixture, id: string): Promise<Entry> {
  await expect
    .poll(async () => (await fixture.entries()).some((e) => e.id === id), { timeout: 20_000 })
    .toBe(true);
  return (await fixture.entries()).find((e) => e.id === id) as Entry;
}

async function prompt(fixture: HostFixture, text: string) {
  await fixture.host.sendPrompt({ agentId: fixture.agentId, prompt: text, clientNonce: text });
}

const lastOutput = (fixture: HostFixture, index: number) => {
  const tool = fixture.model.requests[index]!.messages.findLast((m) => m.role === 'tool');
  const part = tool?.role === 'tool' ? tool.content.at(-1) : undefined;
  return part?.type === 'tool-result' ? part.output : undefined;
};

describe('approval rules', () => {
  it('names MCP calls mcp:<server>/<tool>; an exact rule beats a pattern, a longer pattern a shorter one', () => {
    expect(approvalSubject('mcp', { server: 'github', toolName: 'create_issue' })).toBe(
      'mcp:github/create_issue',
    );
    expect(approvalSubject('web_fetch', { url: 'x' })).toBe('web_fetch');
    const rules = { 'mcp:*': 'ask', 'mcp:github/*': 'auto', 'mcp:github/delete_repo': 'ask' } as const;
    expect(ruleFor(rules, 'mcp:github/list')).toBe('auto');
    expect(ruleFor(rules, 'mcp:github/delete_repo')).toBe('ask');
    expect(ruleFor(rules, 'mcp:linear/x')).toBe('ask');
    expect(ruleFor(rules, 'web_fetch')).toBeUndefined();
    expect(ruleFor({ 'mcp:git.hub/*': 'ask' }, 'mcp:gitXhub/a')).toBeUndefined();
  });
});

describe('approval cards in a real box', () => {
  it('allow runs the call, deny tells the model the user declined, a card is answered once', async () => {
    fx = await hostFixture([write('w1', 'a.txt'), write('w2', 'b.txt'), reply, end]);
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'write two files');

    const first = await card(fx, 'approval-w1');
    expect(first).toMatchObject({
      kind: 'tool-call',
      name: 'write',
      status: 'awaiting-approval',
      toolCallId: 'w1',
      approval: { subject: 'write', toolName: 'write', args: { path: 'a.txt', content: 'hello' } },
    });
    // Not run before the answer.
    await expect(stat(path.join(fx.sandbox, 'a.txt'))).rejects.toThrow(/ENOENT/);
    // The roster says the agent waits on a card (the page notifies from it), and says so again when it no longer does.
    const rosterEvents: string[] = [];
    const unsubscribe = fx.host.subscribe((event) => {
      if (event.type === 'roster' && event.agentId === fx?.agentId) rosterEvents.push(event.change);
    });
    // The turn waits on the user, as after a widget.
    expect((await fx.host.listAgents())[0]).toMatchObject({
      awaitingApproval: true,
      awaitingUserResponse: true,
      state: 'awaiting-user',
    });
    await expect(
      fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'no-such', decision: 'allow' }),
    ).rejects.toMatchObject({ status: 404 });
    expect(
      await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).toEqual({
      accepted: true,
      resumed: true,
    });
    expect(rosterEvents).toContain('updated');
    await expect(
      fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'deny' }),
    ).rejects.toMatchObject({ status: 409 });

    await card(fx, 'approval-w2');
    await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w2', decision: 'deny' });
    await fx.host.idle(fx.agentId);
    expect((await fx.host.listAgents())[0]).toMatchObject({ awaitingApproval: false, state: 'idle' });
    unsubscribe();

    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    await expect(stat(path.join(fx.sandbox, 'b.txt'))).rejects.toThrow(/ENOENT/);
    expect(lastOutput(fx, 2)).toEqual({
      type: 'error-text',
      value: expect.stringContaining('The user declined this write call') as string,
    });
    const entries = (await fx.entries()) as Entry[];
    expect(entries.find((e) => e.id === 'approval-w1-answer')).toMatchObject({ status: 'approved' });
    expect(entries.find((e) => e.id === 'approval-w2-answer')).toMatchObject({ status: 'denied' });
    // The answer is in the ledger: a second one is refused after a restart too.
    await fx.host.close();
    const { createAgentHost } = await import('../host/agent-host.ts');
    const host = await createAgentHost({ dataDir: fx.dataDir, provider: null, env: {} });
    fx = { ...fx, host, dispose: () => host.close() };
    await expect(
      host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('allow-always stops asking for that tool; cancelTurn ends a waiting card', async () => {
    fx = await hostFixture([
      write('w1', 'a.txt'),
      write('w2', 'b.txt'),
      reply,
      end,
      write('w3', 'c.txt'),
      reply,
      end,
    ]);
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'first');
    await card(fx, 'approval-w1');
    await fx.host.answerToolApproval({
      agentId: fx.agentId,
      entryId: 'approval-w1',
      decision: 'allow-always',
    });
    await fx.host.idle(fx.agentId);
    // w2 ran without a card.
    expect(await readFile(path.join(fx.sandbox, 'b.txt'), 'utf8')).toBe('hello');
    expect((await fx.entries()).some((e) => e.id === 'approval-w2')).toBe(false);
    expect(
      JSON.parse(
        await readFile(path.join(agentPaths(fx.dataDir, fx.agentId).agentDir, 'approvals.json'), 'utf8'),
      ),
    ).toEqual({
      alwaysAllow: ['write'],
      allowOnce: [],
    });

    // A fresh agent file rule: ask again (the remembered answer is removed), then Stop.
    await import('node:fs/promises').then((fs) =>
      fs.rm(path.join(agentPaths(fx!.dataDir, fx!.agentId).agentDir, 'approvals.json')),
    );
    await prompt(fx, 'second');
    await card(fx, 'approval-w3');
    expect(await fx.host.cancelTurn(fx.agentId)).toEqual({ cancelled: true });
    await fx.host.idle(fx.agentId);
    await expect(stat(path.join(fx.sandbox, 'c.txt'))).rejects.toThrow(/ENOENT/);
    // The card reads "stopped", and a late answer is refused.
    expect((await fx.entries()).find((e) => e.id === 'approval-w3-answer')).toMatchObject({
      status: 'stopped',
      approval: { answers: 'approval-w3', decision: 'stopped' },
    });
    await expect(
      fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w3', decision: 'allow' }),
    ).rejects.toMatchObject({ status: 409, message: expect.stringContaining('stopped') as string });
  });

  it('a card shows the arguments scrubbed: a secret the agent holds never reaches the card or the ledger', async () => {
    const SECRET = 'ghp_Card/Secret+value42';
    fx = await hostFixture([
      {
        toolCalls: [
          {
            name: 'send_message',
            input: { type: 'secret-request', secret: { label: 'GitHub token', name: 'GH_TOKEN' } },
          },
        ],
      },
      end,
      { toolCalls: [{ id: 'w1', name: 'write', input: { path: 'token.txt', content: `token=${SECRET}` } }] },
      reply,
      end,
    ]);
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'keep my token');
    await card(fx, 't0s0');
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: SECRET });
    const shown = await card(fx, 'approval-w1');
    expect(shown).toMatchObject({
      approval: { args: { path: 'token.txt', content: 'token=[secret GH_TOKEN redacted]' } },
    });
    await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'deny' });
    await fx.host.idle(fx.agentId);
    expect(JSON.stringify(ledgerOnDisk(fx.dataDir, fx.agentId).rows)).not.toContain(SECRET);
  });

  it('the box stopped while a card waits: answered after the restart through the inbox, once; the call runs when made again', async () => {
    fx = await hostFixture([write('w1', 'a.txt'), reply, end]);
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'write a file');
    await card(fx, 'approval-w1');
    // Closing does not wait for the answer; the card stays open.
    await fx.host.close();
    expect(JSON.stringify(ledgerOnDisk(fx.dataDir, fx.agentId).rows)).not.toContain('approval-w1-answer');

    const { createAgentHost } = await import('../host/agent-host.ts');
    const model = scriptedProvider([write('w1-again', 'a.txt'), reply, end]);
    const host = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    fx = { ...fx, host, model, dispose: () => host.close() };
    // The card's turn is gone, the card is not: the agent waits on the user, as after a widget.
    expect((await host.sessionOf(fx.agentId)).turnState).toBe('awaiting-user');
    expect(
      await host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).toEqual({ accepted: true, resumed: false });
    await expect(
      host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'deny' }),
    ).rejects.toMatchObject({ status: 409 });
    await host.idle(fx.agentId);

    // The turn the inbox input started told the model; its repeated call ran without a card.
    expect(lastUserText(model, 0)).toContain('The user allowed the write call you asked approval for');
    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    const entries = (await host.entriesAfter(fx.agentId, 0)) as Entry[];
    expect(entries.some((e) => e.id === 'approval-w1-again')).toBe(false);
    expect(entries.find((e) => e.id === 'approval-w1-answer')).toMatchObject({
      status: 'approved',
      approval: { decision: 'allow' },
    });
    // The grant was used up: the next such call asks again.
    expect(
      JSON.parse(
        await readFile(path.join(agentPaths(fx.dataDir, fx.agentId).agentDir, 'approvals.json'), 'utf8'),
      ),
    ).toEqual({ alwaysAllow: [], allowOnce: [] });
    await expect(
      host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).rejects.toMatchObject({ status: 409 });
    expect((await host.sessionOf(fx.agentId)).turnState).toBe('idle');
  });

  it('a profile\'s approvals ask before non-MCP tools too: {"web_fetch": "ask", "mcp:github/*": "ask"}', async () => {
    fx = await hostFixture([
      { toolCalls: [{ id: 'f1', name: 'web_fetch', input: { url: 'https://example.com/' } }] },
      {
        toolCalls: [
          {
            id: 'g1',
            name: 'mcp',
            input: { server: 'github', toolName: 'create_issue', args: { title: 'x' } },
          },
        ],
      },
      write('w1', 'a.txt'),
      reply,
      end,
    ]);
    await askFor(fx, { web_fetch: 'ask', 'mcp:github/*': 'ask' });
    await prompt(fx, 'fetch, file an issue, write');
    expect(await card(fx, 'approval-f1')).toMatchObject({
      name: 'web_fetch',
      approval: { subject: 'web_fetch', toolName: 'web_fetch', args: { url: 'https://example.com/' } },
    });
    await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-f1', decision: 'deny' });
    expect(await card(fx, 'approval-g1')).toMatchObject({
      name: 'mcp',
      approval: {
        subject: 'mcp:github/create_issue',
        server: 'github',
        toolName: 'create_issue',
        args: { title: 'x' },
      },
    });
    await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-g1', decision: 'deny' });
    await fx.host.idle(fx.agentId);
    expect(lastOutput(fx, 1)).toEqual({
      type: 'error-text',
      value: expect.stringContaining('The user declined this web_fetch call') as string,
    });
    // A tool the rules do not name runs without a card.
    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    expect((await fx.entries()).some((e) => e.id === 'approval-w1')).toBe(false);
  });
});

describe('an approval card and the rest of the conversation', () => {
  it('a prompt sent while a card waits: the turn ends there, the prompt is answered, the card stays answerable', async () => {
    fx = await hostFixture([
      write('w1', 'a.txt'),
      // The prompt's turn.
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Hello!' } }] },
      end,
      // The answer's own turn: the model makes the call again, and it runs without a second card.
      write('w1-again', 'a.txt'),
      reply,
      end,
    ]);
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'write a file');
    await card(fx, 'approval-w1');
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'never mind, say hello', clientNonce: 'hi' });
    // Answered without the card being answered (a prompt queued behind the waiting turn never is).
    await expect
      .poll(async () => (await fx!.entries()).some((e) => e.kind === 'send-message'), { timeout: 10_000 })
      .toBe(true);
    await fx.host.idle(fx.agentId);
    expect(lastUserText(fx.model, 1)).toContain('never mind, say hello');
    expect(lastOutput(fx, 1)).toEqual({
      type: 'error-text',
      value: expect.stringContaining('the user sent a new message before answering') as string,
    });
    await expect(stat(path.join(fx.sandbox, 'a.txt'))).rejects.toThrow(/ENOENT/);
    expect((await fx.host.listAgents())[0]).toMatchObject({ awaitingApproval: false, state: 'idle' });
    // The first turn ended where the card was: one model call, then the prompt's.
    expect(fx.model.requests).toHaveLength(3);

    expect(
      await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).toEqual({ accepted: true, resumed: false });
    await fx.host.idle(fx.agentId);
    expect(lastUserText(fx.model, 3)).toContain('The user allowed the write call you asked approval for');
    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    expect((await fx.entries()).some((e) => e.id === 'approval-w1-again')).toBe(false);
  });

  it('a live answer is durable: the box dies right after answerToolApproval returns, and the answer is applied after the restart', async () => {
    let dead = false;
    const writePoints = new WritePoints({ fail: (store) => (dead ? diskFullError(store) : null) });
    fx = await hostFixture([write('w1', 'a.txt'), reply, end], { writePoints });
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'write a file');
    await card(fx, 'approval-w1');
    expect(
      await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' }),
    ).toEqual({ accepted: true, resumed: true });
    // The 2xx is out: from here on nothing the box writes lands, as if it were killed.
    dead = true;
    await fx.host.idle(fx.agentId);
    await fx.host.close();

    // The cut turn goes on (agent/turn-resume.ts; its call reads "interrupted"), its note telling the
    // model the answer no call took; the answer is taken by that turn, not by a turn of its own.
    const model = scriptedProvider([write('w1-again', 'a.txt'), reply, end]);
    reopened = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    await reopened.idle(fx.agentId);
    expect(lastUserText(model, 0)).toContain(TURN_RESUMED_NOTE);
    expect(lastUserText(model, 0)).toContain('The user allowed the write call you asked approval for');
    // The answer was not lost, and the call made again ran once, without a second card.
    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    const entries = (await reopened.entriesAfter(fx.agentId, 0)) as Entry[];
    expect(entries.some((e) => e.id === 'approval-w1-again')).toBe(false);
    expect(entries.filter((e) => e.id === 'approval-w1-answer')).toHaveLength(1);
    expect(entries.filter((e) => /^t\du$/.test(e.id)).map((e) => e.id)).toEqual(['t0u']);
    expect(model.requests).toHaveLength(3);
    expect(await reopened.listAgents()).toMatchObject([{ pendingInputs: 0, state: 'idle' }]);
    await expect(
      reopened.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'deny' }),
    ).rejects.toMatchObject({ status: 409 });
  });

  it('a live answer is applied once: taken by the call it resumed, even when the inbox row could not say so', async () => {
    let inboxFails = false;
    const writePoints = new WritePoints({
      fail: (store) => (inboxFails && store === 'inbox' ? diskFullError(store) : null),
    });
    fx = await hostFixture([write('w1', 'a.txt'), reply, end], { writePoints });
    await askFor(fx, { write: 'ask' });
    await prompt(fx, 'write a file');
    await card(fx, 'approval-w1');
    await fx.host.answerToolApproval({ agentId: fx.agentId, entryId: 'approval-w1', decision: 'allow' });
    // The answer is in the inbox; marking it taken fails (the ledger, the commit point, still says so).
    inboxFails = true;
    await fx.host.idle(fx.agentId);
    expect(await readFile(path.join(fx.sandbox, 'a.txt'), 'utf8')).toBe('hello');
    expect(fx.model.requests).toHaveLength(3);
    await fx.host.close();
    inboxFails = false;

    const model = scriptedProvider([]);
    reopened = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    await reopened.idle(fx.agentId);
    // No turn of its own: the model is not told again, the call is not made twice.
    expect(model.requests).toHaveLength(0);
    expect(await reopened.listAgents()).toMatchObject([{ pendingInputs: 0, state: 'idle' }]);
    expect(
      JSON.parse(
        await readFile(path.join(agentPaths(fx.dataDir, fx.agentId).agentDir, 'approvals.json'), 'utf8'),
      ),
    ).toEqual({ alwaysAllow: [], allowOnce: [] });
  });

  it('takenApprovalAnswers: a result after the answer is taken; one before it (a prompt came first) is not', () => {
    const rows = [
      { id: 'approval-a', kind: 'tool-call', toolCallId: 'a', status: 'awaiting-approval', approval: {} },
      { id: 'approval-a-answer', kind: 'tool-call', toolCallId: 'a', approval: { answers: 'approval-a' } },
      { id: 't3c0', kind: 'tool-call', toolCallId: 'a', status: 'success' },
      { id: 'approval-b', kind: 'tool-call', toolCallId: 'b', status: 'awaiting-approval', approval: {} },
      { id: 't4c0', kind: 'tool-call', toolCallId: 'b', status: 'error' },
      { id: 'approval-b-answer', kind: 'tool-call', toolCallId: 'b', approval: { answers: 'approval-b' } },
    ];
    expect([...takenApprovalAnswers(rows)]).toEqual([[approvalNonce('approval-a'), 3]]);
  });

  it('takenApprovalAnswers: an answer to a cut turn’s card is taken by that turn when it went on after it, not when it was only closed', () => {
    const card = (id: string) => ({
      id: `approval-${id}`,
      kind: 'tool-call',
      toolCallId: id,
      status: 'awaiting-approval',
      approval: {},
    });
    const answer = (id: string) => ({
      id: `approval-${id}-answer`,
      kind: 'tool-call',
      toolCallId: id,
      approval: { answers: `approval-${id}` },
    });
    const rows = [
      { id: 't5u', kind: 'message' },
      card('c'),
      // The box stopped; the answer came; the resumed turn took a step (its note told the model).
      answer('c'),
      { id: 't5a0', kind: 'assistant' },
      { id: 't5e', kind: 'turn-ended' },
      { id: 't6u', kind: 'message' },
      card('d'),
      // The box stopped; the answer came; the cut turn was only closed with a notice.
      answer('d'),
      { id: 't6n0', kind: 'notice' },
      { id: 't6e', kind: 'turn-ended' },
      { id: 't7u', kind: 'message' },
      { id: 't7a0', kind: 'assistant' },
    ];
    expect([...takenApprovalAnswers(rows)]).toEqual([[approvalNonce('approval-c'), 5]]);
  });
});

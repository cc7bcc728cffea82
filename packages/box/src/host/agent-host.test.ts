import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AWAITING_USER_REFUSAL, textOnlyTurnReminder } from '@sendbox/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import {
  hostFixture,
  lastToolOutputs,
  lastUserText,
  ledgerOnDisk,
  type HostFixture,
} from '../testing/host-fixture.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { TURN_TEXTS } from '../agent/turn-texts.ts';
import { HostError } from '../agent/errors.ts';
import { type SequencedEntry } from '../stores/ledger.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });
const shell = (command: string) => ({ name: 'shell', input: { command } });
const kinds = (entries: SequencedEntry[]) => entries.map((e) => `${e.kind}:${e.id}`);

async function hostError(promise: Promise<unknown>): Promise<HostError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof HostError)) throw new Error(`expected a HostError, got ${String(error)}`);
  return error;
}

describe('a turn', () => {
  it('records the user message, private text and a delivered send, with Grok Bot ids', async () => {
    fx = await hostFixture([
      { text: 'Let me greet them.', toolCalls: [send({ type: 'text', content: 'Hello!' })] },
      { text: '' },
    ]);
    await fx.prompt('hi');
    const entries = await fx.entries();
    expect(kinds(entries)).toEqual(['message:t0u', 'thinking:t0a0', 'send-message:t0s0', 'turn-ended:t0e']);
    expect(entries[2]).toMatchObject({ message: { type: 'text', content: 'Hello!' } });
    // The model saw the guidance as a system_reminder in the user turn.
    expect(lastUserText(fx.model, 0)).toMatch(/^\[t0u\]\nhi\n<system_reminder>\n## Talking to the user/);
    expect(lastToolOutputs(fx.model, 1)).toEqual(['Message sent to user. (id: t0s0)']);
    const records = await fx.records();
    expect(records.map((r) => r.role)).toEqual(['user', 'assistant', 'assistant', 'tool']);
    expect(records[2]).toMatchObject({
      message: {
        content: [{ type: 'tool_use', name: 'send_message', input: { text: { content: 'Hello!' } } }],
      },
    });
    const toolCallId = (records[2] as { message: { content: Array<{ input: { toolCallId: string } }> } })
      .message.content[0]!.input.toolCallId;
    expect(toolCallId).toEqual(expect.any(String));
    const result = (
      records[3] as {
        message: { content: Array<{ result: { success: { timestamp: string; messageId: string } } }> };
      }
    ).message.content[0]!.result;
    expect(result.success.messageId).toBe('t0s0');
    expect(result.success.timestamp).toMatch(/^\d+$/);
  });

  it('answers a bad send with a model-readable error, and the retry is delivered', async () => {
    fx = await hostFixture([
      { toolCalls: [send({ type: 'text' })] },
      { toolCalls: [send({ type: 'text', content: 'Fixed.' })] },
      {},
    ]);
    await fx.prompt('go');
    const [error] = lastToolOutputs(fx.model, 1);
    expect(error).toMatch(/^Not delivered: this send_message call has a problem/);
    expect(error).toContain('content');
    const sends = (await fx.entries()).filter((e) => e.kind === 'send-message');
    expect(sends.map((e) => e.id)).toEqual(['t0s0']);
    const records = await fx.records();
    const results = records.filter((r) => r.role === 'tool').map((r) => JSON.stringify(r));
    expect(results[0]).toContain('"error":{"error":"Not delivered');
    expect(results[1]).toContain('"messageId":"t0s0"');
  });

  it('never delivers the same message twice in a turn', async () => {
    fx = await hostFixture([
      { toolCalls: [send({ type: 'text', content: 'Done.' })] },
      { toolCalls: [send({ type: 'text', content: 'Done.' })] },
      {},
    ]);
    await fx.prompt('go');
    expect((await fx.entries()).filter((e) => e.kind === 'send-message')).toHaveLength(1);
    expect(lastToolOutputs(fx.model, 2)[0]).toContain('already delivered in this turn (id: t0s0)');
  });

  it('is idempotent per clientNonce', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'once' })] }, {}]);
    await fx.prompt('hi', 'same-nonce');
    const again = await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'hi', clientNonce: 'same-nonce' });
    await fx.host.idle(fx.agentId);
    expect(again).toEqual({ accepted: true, duplicate: true });
    expect(fx.model.requests).toHaveLength(2);
    expect((await fx.entries()).filter((e) => e.kind === 'message')).toHaveLength(1);
  });
});

describe('the state gate', () => {
  const widget = { prompt: 'Pick a colour', options: [{ label: 'Red' }, { label: 'Blue', value: 'blue' }] };

  it('ends the turn on a widget, refuses further sends, and takes the answer once as the next user message', async () => {
    fx = await hostFixture([
      { toolCalls: [send({ type: 'widget', widget }), send({ type: 'text', content: 'While you think…' })] },
      { toolCalls: [send({ type: 'text', content: 'Blue it is.' })] },
      {},
    ]);
    await fx.prompt('choose for me');
    // The widget ended the turn: one model step only, the second send refused.
    expect(fx.model.requests).toHaveLength(1);
    const records = await fx.records();
    expect(JSON.stringify(records.at(-1))).toContain(JSON.stringify(AWAITING_USER_REFUSAL).slice(1, -1));
    const sends = (await fx.entries()).filter((e) => e.kind === 'send-message');
    expect(sends.map((e) => e.id)).toEqual(['t0s0']);
    expect((await fx.host.listAgents())[0]).toMatchObject({
      awaitingUserResponse: true,
      state: 'awaiting-user',
    });

    await fx.host.answerWidget({ agentId: fx.agentId, messageId: 't0s0', answer: 'Blue' });
    await fx.host.idle(fx.agentId);
    // Grok Bot's shape: the model and the JSONL name the label clicked; the ledger adds the value.
    expect(lastUserText(fx.model, 1)).toMatch(
      /^\[t1u\]\n\[Answering your question t0s0: "Pick a colour"\]\nBlue\n/,
    );
    expect(JSON.stringify((await fx.records()).filter((r) => r.role === 'user').at(-1))).toContain(
      '\\nBlue"',
    );
    const answer = (await fx.entries()).find((e) => e.id === 't1u');
    expect(answer).toMatchObject({
      kind: 'message',
      role: 'user',
      content: 'Blue',
      respondedValue: 'blue',
      widgetSkipped: false,
      replyTo: 't0s0',
    });

    const second = await hostError(
      fx.host.answerWidget({ agentId: fx.agentId, messageId: 't0s0', answer: 'Red' }),
    );
    expect(second.status).toBe(409);
    expect((await fx.host.listAgents())[0]).toMatchObject({ awaitingUserResponse: false, state: 'idle' });
  });

  it('refuses answers to unknown ids and options that do not exist', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'widget', widget })] }]);
    await fx.prompt('ask me');
    expect(
      (await hostError(fx.host.answerWidget({ agentId: fx.agentId, messageId: 't9s9', answer: 'x' }))).status,
    ).toBe(404);
    expect(
      (await hostError(fx.host.answerWidget({ agentId: fx.agentId, messageId: 't0s0', answer: 'Green' })))
        .status,
    ).toBe(400);
    expect(
      (await hostError(fx.host.answerWidget({ agentId: 'nope', messageId: 't0s0', answer: 'Red' }))).status,
    ).toBe(404);
  });

  it('keeps an unanswered question answerable after a restart', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'widget', widget })] }]);
    await fx.prompt('ask me');
    const { dataDir, agentId } = fx;
    await fx.host.close();
    const { createAgentHost } = await import('./agent-host.ts');
    const { scriptedProvider } = await import('../providers/scripted.ts');
    const model = scriptedProvider([{ toolCalls: [send({ type: 'text', content: 'ok' })] }, {}]);
    const host = await createAgentHost({ dataDir, provider: model, env: {} });
    try {
      expect((await host.listAgents())[0]).toMatchObject({ awaitingUserResponse: true });
      await host.answerWidget({ agentId, messageId: 't0s0', answer: 'Red' });
      await host.idle(agentId);
      // The model sees the whole earlier conversation, rebuilt from the JSONL.
      const seen = JSON.stringify(model.requests[0]!.messages);
      expect(seen).toContain('[t0u]\\nask me');
      expect(seen).toContain('[Answering your question t0s0');
      expect((await hostError(host.answerWidget({ agentId, messageId: 't0s0', answer: 'Red' }))).status).toBe(
        409,
      );
    } finally {
      await host.close();
    }
  });
});

describe('the roster', () => {
  it('previews the last entry a user sees: a send, a user message, a notice — never a turn end or thinking', async () => {
    fx = await hostFixture([
      { text: 'private plan', toolCalls: [send({ type: 'text', content: 'First reply' })] },
      { text: 'more private text' },
    ]);
    await fx.prompt('hello there');
    // The ledger ends with thinking and a turn end; the preview is the send before them.
    expect(kinds(await fx.entries()).slice(-2)).toEqual(['thinking:t0a1', 'turn-ended:t0e']);
    expect((await fx.host.listAgents())[0]!.lastEntry).toEqual({ kind: 'send-message', text: 'First reply' });
    // No model step for this one: the user's message is the last thing seen.
    fx.model.push({ error: new Error('model down') });
    await fx.prompt('are you there?');
    expect((await fx.host.listAgents())[0]!.lastEntry).toEqual({
      kind: 'notice',
      text: expect.stringContaining('model down') as unknown,
    });
    // After a restart the preview is the same (read from the ledger).
    await fx.host.close();
    const { createAgentHost } = await import('./agent-host.ts');
    const again = await createAgentHost({ dataDir: fx.dataDir, provider: null, env: {} });
    try {
      expect((await again.listAgents())[0]!.lastEntry).toMatchObject({ kind: 'notice' });
    } finally {
      await again.close();
    }
  });
});

describe('middleware', () => {
  it('injects the non-send reminder at exactly N consecutive tool calls, and a send resets the count', async () => {
    fx = await hostFixture(
      [
        { toolCalls: [shell('true'), shell('true')] }, // 2
        { toolCalls: [shell('true')] }, // 3 → reminder before request #2
        { toolCalls: [shell('true'), shell('true'), send({ type: 'text', content: 'progress' })] }, // reset
        { toolCalls: [shell('true'), shell('true')] }, // 2 → no reminder
        {},
      ],
      { sendReminderEvery: 3 },
    );
    await fx.prompt('work');
    const reminderAt = fx.model.requests.map((r) =>
      JSON.stringify(r.messages.at(-1)).includes('tool calls in a row'),
    );
    expect(reminderAt).toEqual([false, false, true, false, false]);
    expect(lastUserText(fx.model, 2)).toContain('<system_reminder>');
    expect(lastUserText(fx.model, 2)).toContain('3 tool calls in a row');
    // The reminder is what the model reads, never what the files hold (Grok Bot's files have none).
    expect(JSON.stringify(await fx.records())).not.toContain('tool calls in a row');
    expect(JSON.stringify(await fx.records())).not.toContain('system_reminder');
    expect(JSON.stringify(await fx.entries())).not.toContain('tool calls in a row');
  });

  it('gives a text-only turn one reminder and one more step, then records a notice', async () => {
    fx = await hostFixture([{ text: 'All done, the answer is 4.' }, { text: 'I said: 4.' }]);
    await fx.prompt('2+2?');
    expect(fx.model.requests).toHaveLength(2);
    expect(lastUserText(fx.model, 1)).toContain(textOnlyTurnReminder());
    const entries = await fx.entries();
    expect(kinds(entries)).toEqual([
      'message:t0u',
      'thinking:t0a0',
      'thinking:t0a1',
      'notice:t0n0',
      'turn-ended:t0e',
    ]);
    expect(entries[3]).toMatchObject({ text: TURN_TEXTS.noReplyNotice });
  });

  it('records no notice when the reminded model then sends', async () => {
    fx = await hostFixture([
      { text: 'The answer is 4.' },
      { toolCalls: [send({ type: 'text', content: '4' })] },
      {},
    ]);
    await fx.prompt('2+2?');
    expect((await fx.entries()).map((e) => e.kind)).not.toContain('notice');
  });

  it('records a notice when the model call fails, and the agent takes the next prompt', async () => {
    fx = await hostFixture([
      { error: new Error('HTTP 500 from the model') },
      { toolCalls: [send({ type: 'text', content: 'back' })] },
      {},
    ]);
    await fx.prompt('one');
    const notice = (await fx.entries()).find((e) => e.kind === 'notice');
    expect(notice).toMatchObject({ text: expect.stringContaining('HTTP 500 from the model') as unknown });
    await fx.prompt('two');
    expect((await fx.entries()).filter((e) => e.kind === 'send-message')).toHaveLength(1);
  });
});

describe('attachments', () => {
  it('ingests a sandbox file into the content-addressed store; identical files are stored once', async () => {
    fx = await hostFixture();
    const sandbox = fx.sandbox;
    await writeFile(path.join(sandbox, 'a.csv'), 'x,y\n1,2\n');
    await writeFile(path.join(sandbox, 'b.csv'), 'x,y\n1,2\n');
    fx.model.push(
      { toolCalls: [send({ type: 'attachment', url: `file://${sandbox}/a.csv` })] },
      { toolCalls: [send({ type: 'attachment', url: `file://${sandbox}/b.csv`, alt: 'copy' })] },
      { toolCalls: [send({ type: 'attachment', url: 'https://example.com/report.pdf' })] },
      {},
    );
    await fx.prompt('send the data');
    const sends = (await fx.entries()).filter((e) => e.kind === 'send-message');
    expect(sends).toHaveLength(3);
    const [a, b, remote] = sends.map((e) => (e as { message: Record<string, unknown> }).message);
    expect(a).toMatchObject({ type: 'attachment', file_name: 'a.csv', size: 8, media_type: 'text/csv' });
    expect(b).toMatchObject({ file_name: 'b.csv', sha256: a!.sha256, url: a!.url, alt: 'copy' });
    expect(remote).toEqual({
      type: 'attachment',
      url: 'https://example.com/report.pdf',
      file_name: 'report.pdf',
    });
    const stored = await readdir(agentPaths(fx.dataDir, fx.agentId).attachments);
    expect(stored).toEqual([`${String(a!.sha256)}.csv`]);
    expect(String(a!.url)).toBe(`file://${agentPaths(fx.dataDir, fx.agentId).attachments}/${stored[0]}`);
  });

  it('refuses files outside the sandbox, including through .. and a symlink', async () => {
    fx = await hostFixture();
    const outside = path.join(fx.dataDir, 'outside.txt');
    await writeFile(outside, 'not yours');
    await symlink(outside, path.join(fx.sandbox, 'link.txt'));
    await mkdir(path.join(fx.sandbox, 'sub'));
    fx.model.push(
      {
        toolCalls: [
          send({ type: 'attachment', url: `file://${outside}` }),
          send({ type: 'attachment', url: `file://${fx.sandbox}/sub/../../outside.txt` }),
          send({ type: 'attachment', url: `file://${fx.sandbox}/link.txt` }),
          send({ type: 'attachment', url: `file://${fx.sandbox}/missing.txt` }),
        ],
      },
      { toolCalls: [send({ type: 'text', content: 'I could not attach it.' })] },
      {},
    );
    await fx.prompt('send that file');
    const outputs = lastToolOutputs(fx.model, 1);
    expect(outputs).toHaveLength(4);
    for (const out of outputs.slice(0, 2)) {
      expect(out).toMatch(/^Not delivered: The path .* outside/);
      expect(out).toContain(`sandbox folder ${fx.sandbox}`);
    }
    // A link the agent made is never followed, wherever it points.
    expect(outputs[2]).toMatch(/^Not delivered: .*link\.txt" is a symbolic link, not a regular file/);
    expect(outputs[3]).toContain('No file');
    expect((await fx.entries()).filter((e) => e.kind === 'send-message')).toHaveLength(1);
    expect(await readdir(agentPaths(fx.dataDir, fx.agentId).attachments).catch(() => [])).toEqual([]);
  });

  it('stages an upload in the sandbox and tells the model on the next prompt', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'got it' })] }, {}]);
    const entry = await fx.host.uploadFile({
      agentId: fx.agentId,
      fileName: 'notes.txt',
      bytes: Buffer.from('hello'),
    });
    expect(entry).toMatchObject({
      kind: 'user-attachment',
      id: 't0ua0',
      file_name: 'notes.txt',
      byteSize: 5,
    });
    expect(await readFile(path.join(fx.sandbox, 'uploads', 'notes.txt'), 'utf8')).toBe('hello');
    await fx.prompt('read my notes');
    expect(lastUserText(fx.model, 0)).toContain(
      `[The user attached a file: ${fx.sandbox}/uploads/notes.txt]`,
    );
  });

  it('never gives a later upload the name of an earlier one, though the folder lacks it', async () => {
    // A cluster gateway's folder is not the turn worker's: the name must not depend on it alone.
    const box = await hostFixture([]);
    fx = box;
    const upload = () =>
      box.host.uploadFile({ agentId: box.agentId, fileName: 'notes.txt', bytes: Buffer.from('x') });
    expect((await upload()).sandbox_path).toBe(path.join(box.sandbox, 'uploads', 'notes.txt'));
    await rm(path.join(box.sandbox, 'uploads', 'notes.txt'));
    expect((await upload()).sandbox_path).toBe(path.join(box.sandbox, 'uploads', 'notes (1).txt'));
  });
});

describe('tool environment', () => {
  it("never hands the host's own environment (API keys) to a tool", async () => {
    fx = await hostFixture(
      [
        { toolCalls: [shell('echo "key=${XAI_API_KEY:-none} home=$HOME"')] },
        { toolCalls: [send({ type: 'text', content: 'ok' })] },
        {},
      ],
      {
        env: { XAI_API_KEY: 'xai-host-key-123', PATH: process.env.PATH ?? '/usr/bin:/bin' },
      },
    );
    await fx.prompt('print it');
    expect(lastToolOutputs(fx.model, 1)[0]).toContain(`key=none home=${fx.sandbox}`);
  });
});

describe('secrets', () => {
  const SECRET = 'ghp_Sup3rS3cretValue42';

  it('never lets a secret reach the JSONL, the ledger, events or later model input, even when a tool prints it', async () => {
    fx = await hostFixture([
      { toolCalls: [send({ type: 'secret-request', secret: { label: 'GitHub token', name: 'GH_TOKEN' } })] },
      {
        toolCalls: [
          shell('echo "token is $GH_TOKEN"; printf %s "$GH_TOKEN" > tok.txt'),
          { name: 'read', input: { path: 'tok.txt' } },
        ],
      },
      { toolCalls: [send({ type: 'text', content: 'Token works.' })] },
      {},
    ]);
    await fx.prompt('use my github');
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: SECRET });
    await fx.host.idle(fx.agentId);

    // The tool really had it: the file it wrote holds the value.
    expect(await readFile(path.join(fx.sandbox, 'tok.txt'), 'utf8')).toBe(SECRET);
    const outputs = lastToolOutputs(fx.model, 2);
    expect(outputs[0]).toContain('token is [secret GH_TOKEN redacted]');
    expect(outputs[1]).toContain('[secret GH_TOKEN redacted]');
    expect(lastUserText(fx.model, 1)).toContain('environment variable GH_TOKEN');

    const paths = agentPaths(fx.dataDir, fx.agentId);
    await fx.host.close();
    const everything = [
      await readFile(paths.jsonl, 'utf8'),
      (await readFile(paths.storeDb)).toString('latin1'),
      await readFile(`${paths.storeDb}-wal`).then(
        (b) => b.toString('latin1'),
        () => '',
      ),
      (await readFile(paths.secrets)).toString('latin1'),
      JSON.stringify(fx.events),
      JSON.stringify(fx.model.requests),
      JSON.stringify(ledgerOnDisk(fx.dataDir, fx.agentId)),
    ].join('\n');
    expect(everything).not.toContain(SECRET);
    expect((await fx.host.listAgents().catch(() => [])).length).toBe(0);
  });

  it('accepts a secret once', async () => {
    fx = await hostFixture([
      { toolCalls: [send({ type: 'secret-request', secret: { label: 'Key', name: 'API_KEY' } })] },
      {},
    ]);
    await fx.prompt('need key');
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'thanks' })] }, {});
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: 'value-one-1234' });
    const again = await hostError(
      fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: 'value-two-1234' }),
    );
    expect(again.status).toBe(409);
    await fx.host.idle(fx.agentId);
  });
});

describe('the agent lifecycle', () => {
  it('holds the focused agent store lock against other writers until another agent is opened', async () => {
    fx = await hostFixture();
    const storeDb = agentPaths(fx.dataDir, fx.agentId).storeDb;
    const external = new Database(storeDb, { timeout: 50 });
    try {
      expect(() => external.exec(`INSERT INTO kv (key, value) VALUES ('x', '1')`)).toThrow(/locked|busy/i);
      const other = await fx.host.createAgent({ name: 'Other' });
      await fx.host.openAgent(other.id);
      external.exec(`INSERT INTO kv (key, value) VALUES ('x', '1')`);
    } finally {
      external.close();
    }
    // The host's own writes go through while it holds the lock.
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'still writing' })] }, {});
    await fx.host.openAgent(fx.agentId);
    await fx.prompt('hello');
    expect((await fx.entries()).some((e) => e.kind === 'send-message')).toBe(true);
  });

  it('picks up entries another writer added while the agent was not focused', async () => {
    fx = await hostFixture();
    const other = await fx.host.createAgent({ name: 'Other' });
    await fx.host.openAgent(other.id);
    const { openLedgerForWrite } = await import('@sendbox/txcript');
    const ledger = openLedgerForWrite(agentPaths(fx.dataDir, fx.agentId).storeDb);
    ledger.appendEntries([{ id: 't0u', kind: 'message', role: 'user', content: 'seeded', timestampMs: 1 }]);
    ledger.close();
    const entries = await fx.host.openAgent(fx.agentId);
    expect(entries.map((e) => e.id)).toEqual(['t0u']);
    fx.model.push({ toolCalls: [send({ type: 'text', content: 'hi' })] }, {});
    await fx.prompt('next');
    expect((await fx.entries()).map((e) => e.id)).toContain('t1u');
  });

  it('duplicates history under a new id, and deletes every folder of an agent', async () => {
    fx = await hostFixture();
    await writeFile(path.join(fx.sandbox, 'r.txt'), 'report');
    fx.model.push({ toolCalls: [send({ type: 'attachment', url: `file://${fx.sandbox}/r.txt` })] }, {});
    await fx.prompt('first');
    const copy = await fx.host.duplicateAgent(fx.agentId);
    expect(copy.name).toBe('Test agent (copy)');
    const original = await fx.entries();
    const copied = await fx.host.entriesAfter(copy.id, 0);
    expect(copied.map((e) => e.id)).toEqual(original.map((e) => e.id));
    const from = agentPaths(fx.dataDir, fx.agentId);
    const to = agentPaths(fx.dataDir, copy.id);
    expect(await readFile(to.jsonl, 'utf8')).toBe(await readFile(from.jsonl, 'utf8'));
    expect(await readdir(to.attachments)).toEqual(await readdir(from.attachments));
    const copiedSend = copied.find((e) => e.kind === 'send-message') as { message: { url: string } };
    expect(copiedSend.message.url.startsWith(`file://${to.attachments}/`)).toBe(true);

    await fx.host.deleteAgent(copy.id);
    for (const dir of [to.agentDir, to.transcriptDir, to.sandbox]) {
      await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    }
    expect((await hostError(fx.host.openAgent(copy.id))).status).toBe(404);
    expect((await fx.host.listAgents()).map((r) => r.id)).toEqual([fx.agentId]);
  });

  it('continues after a crash that left a torn JSONL line', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'one' })] }, {}]);
    await fx.prompt('first');
    const { jsonl } = agentPaths(fx.dataDir, fx.agentId);
    await writeFile(jsonl, '{"role":"assistant","message":{"content":[{"type":"te', { flag: 'a' });
    const { dataDir, agentId } = fx;
    await fx.host.close();
    const { createAgentHost } = await import('./agent-host.ts');
    const { scriptedProvider } = await import('../providers/scripted.ts');
    const model = scriptedProvider([{ toolCalls: [send({ type: 'text', content: 'two' })] }, {}]);
    const host = await createAgentHost({ dataDir, provider: model, env: {} });
    try {
      await host.sendPrompt({ agentId, prompt: 'second', clientNonce: 'n2' });
      await host.idle(agentId);
      expect(JSON.stringify(model.requests[0]!.messages)).toContain('[t0u]\\nfirst');
      const text = await readFile(jsonl, 'utf8');
      expect(text).toContain('"te\n{"role":"user"');
      const { grokBot } = await import('@sendbox/txcript');
      const parsed = grokBot.text.parse(text, jsonl);
      expect(parsed.warnings).toHaveLength(1);
      expect(
        (await host.entriesAfter(agentId, 0)).filter((e) => e.kind === 'send-message').map((e) => e.id),
      ).toEqual(['t0s0', 't1s0']);
    } finally {
      await host.close();
    }
  });

  it('runs turns of several agents at the same time', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { scriptedProvider } = await import('../providers/scripted.ts');
    const base = scriptedProvider((request) =>
      request.messages.at(-1)?.role === 'tool' ? {} : { toolCalls: [send({ type: 'text', content: 'hi' })] },
    );
    const slow = {
      ...base,
      async step(request: Parameters<typeof base.step>[0]) {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 20));
        inFlight -= 1;
        return base.step(request);
      },
    };
    fx = await hostFixture([], { provider: slow });
    const b = await fx.host.createAgent({ name: 'B' });
    await Promise.all([
      fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'a', clientNonce: 'a' }),
      fx.host.sendPrompt({ agentId: b.id, prompt: 'b', clientNonce: 'b' }),
    ]);
    await Promise.all([fx.host.idle(fx.agentId), fx.host.idle(b.id)]);
    expect(maxInFlight).toBe(2);
    expect((await fx.host.entriesAfter(b.id, 0)).filter((e) => e.kind === 'send-message')).toHaveLength(1);
  });

  it('emits an event for every ledger entry and state change', async () => {
    fx = await hostFixture([{ toolCalls: [send({ type: 'text', content: 'x' })] }, {}]);
    await fx.prompt('go');
    const entryEvents = fx.events.flatMap((e) => (e.type === 'entry' ? [e.entry.id] : []));
    expect(entryEvents).toEqual((await fx.entries()).map((e) => e.id));
    const states = fx.events.flatMap((e) => (e.type === 'state' ? [e.state] : []));
    expect(states).toEqual(['working', 'idle']);
  });

  it('refuses bad requests with fitting statuses', async () => {
    fx = await hostFixture([], { provider: null });
    expect(
      (await hostError(fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'x', clientNonce: 'n' }))).status,
    ).toBe(409);
    expect(
      (await hostError(fx.host.sendPrompt({ agentId: '../etc', prompt: 'x', clientNonce: 'n' }))).status,
    ).toBe(400);
    expect((await hostError(fx.host.createAgent({ name: 'x'.repeat(201) }))).status).toBe(400);
    // A blank name is no name: an untitled agent, named by its first prompt.
    expect((await fx.host.createAgent({ name: '  ' })).name).toBe('');
    expect(fx.host.modelStatus()).toMatchObject({ configured: false });
    expect((await fx.host.listAgents())[0]).toMatchObject({ readOnly: true });
  });
});

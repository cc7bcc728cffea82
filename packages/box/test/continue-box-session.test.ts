/**
 * `txcript continue <box agent> --with grok_bot`, as a new user would run it, against the REAL box
 * (host + gateway on an ephemeral loopback port; only the model is scripted). The minted agent must
 * read like the original: user bubbles hold what the user typed, the widget answer is the user's
 * choice and the widget stays answered, the secret request shows as saved (the secret is not
 * copied), every entry keeps its real time, images and uploads are in the new agent's attachment
 * store (so the gateway serves them), and the sidebar previews the last visible entry.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { questionAnswers, type AnswerableEntry } from '@sendbox/protocol';
import { readLedgerFile } from '@sendbox/txcript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../txcript/src/cli/program.ts';
import type { SequencedEntry } from '../src/stores/ledger.ts';
import type { LocalAgentHost } from '../src/host/agent-host.ts';
import { agentPaths } from '../src/stores/files/layout.ts';
import { scriptedProvider } from '../src/providers/scripted.ts';
import { startMintBox, type MintBox } from './continue-support.ts';

const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });
const SECRET = 'tok-continue-9f8e7d';

let mb: MintBox;
let sourceId: string;
let newId: string;
let stderr = '';
const model = scriptedProvider([]);

async function entriesOf(id: string): Promise<SequencedEntry[]> {
  const { body } = await mb.box.call('openAgent', { id });
  return (body as { entries: SequencedEntry[] }).entries;
}

beforeAll(async () => {
  mb = await startMintBox(model);
  const created = await mb.box.call('createAgent', { name: 'Chart helper' });
  sourceId = (created.body as { agent: { id: string } }).agent.id;
  const sandbox = agentPaths(mb.box.dataDir, sourceId).sandbox;
  await writeFile(path.join(sandbox, 'chart.png'), 'png-bytes');
  // The test box's host is a LocalAgentHost (test-host.ts): it can wait for a turn to end.
  const host = mb.box.host as LocalAgentHost;
  await host.uploadFile({
    agentId: sourceId,
    fileName: 'data.csv',
    bytes: new TextEncoder().encode('x,y\n1,2\n'),
  });
  model.push(
    {
      text: 'I will draw it.',
      toolCalls: [
        send({
          type: 'text',
          content: 'Here it is.',
          images: [{ url: `file://${sandbox}/chart.png`, alt: 'chart' }],
        }),
        send({ type: 'attachment', url: `file://${sandbox}/chart.png` }),
        send({
          type: 'widget',
          widget: { prompt: 'Ship it?', options: [{ label: 'Yes, ship', value: 'yes' }, { label: 'No' }] },
        }),
      ],
    },
    {
      toolCalls: [send({ type: 'secret-request', secret: { label: 'Deploy token', name: 'DEPLOY_TOKEN' } })],
    },
    { text: 'deploying now', toolCalls: [send({ type: 'text', content: 'Deployed.' })] },
    { text: 'all done, nothing more to say' },
  );
  await host.sendPrompt({ agentId: sourceId, prompt: 'make me a chart', clientNonce: 'c1' });
  await host.idle(sourceId);
  await host.answerWidget({ agentId: sourceId, messageId: 't0s2', answer: 'Yes, ship' });
  await host.idle(sourceId);
  await host.submitSecret({ agentId: sourceId, messageId: 't1s0', value: SECRET });
  await host.idle(sourceId);

  let stdout = '';
  const code = await run(['continue', sourceId, '--with', 'grok_bot'], {
    stdout: { write: (s: string) => (stdout += s), isTTY: false },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    readStdin: () => Promise.resolve(''),
    env: { ...mb.env, TZ: 'UTC', NO_COLOR: '1' },
    now: () => new Date(),
  });
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  newId = /^ {2}agent: +(\S+)/m.exec(stdout)![1]!;
}, 60_000);

afterAll(async () => {
  await mb.close();
});

describe('continue a box session into Grok Bot', () => {
  it('the new agent holds the same bubbles with the same times', async () => {
    const before = await entriesOf(sourceId);
    const after = await entriesOf(newId);
    const strip = (e: SequencedEntry) => {
      const { seq: _seq, ...rest } = e;
      return { id: rest.id, kind: rest.kind, timestampMs: rest.timestampMs };
    };
    expect(after.map(strip)).toEqual(before.map(strip));
  });

  it('user bubbles hold what the user typed; the answer is the choice, and the widget stays answered', async () => {
    const after = await entriesOf(newId);
    const users = after.filter((e) => e.kind === 'message' && e.role === 'user');
    expect(users.map((e) => (e.kind === 'message' ? e.content : ''))).toEqual([
      'make me a chart',
      'Yes, ship',
      'Provided Deploy token',
    ]);
    expect(users[1]).toMatchObject({ respondedValue: 'yes', widgetSkipped: false, replyTo: 't0s2' });
    const answers = questionAnswers(after as unknown as AnswerableEntry[]);
    expect([...answers.keys()].sort()).toEqual(['t0s2', 't1s0']);
    expect(JSON.stringify(after)).not.toContain('Answering your question');
    expect(JSON.stringify(after)).not.toContain('system_reminder');
    const row = ((await mb.box.call('listAgents', {})).body as Array<Record<string, unknown>>).find(
      (r) => r.id === newId,
    );
    expect(row).toMatchObject({
      awaitingUserResponse: false,
      lastEntry: { kind: 'send-message', text: 'Deployed.' },
    });
  });

  it('never copies the secret', async () => {
    const newDir = path.join(mb.agentsDir, newId);
    expect(await readdir(newDir)).not.toContain('secrets.enc');
    const files = [path.join(newDir, 'store.db'), path.join(mb.transcriptsDir, newId, `${newId}.jsonl`)];
    for (const file of files) expect((await readFile(file)).includes(SECRET), file).toBe(false);
  });

  it('copies images, attachments and uploads into the new agent, where the gateway serves them', async () => {
    const after = await entriesOf(newId);
    const newAttachments = path.join(mb.agentsDir, newId, 'attachments');
    const upload = after.find((e) => e.kind === 'user-attachment')!;
    expect(upload.kind === 'user-attachment' && upload.file_path.startsWith(newAttachments)).toBe(true);
    const sends = after.filter((e) => e.kind === 'send-message');
    const urls = sends.flatMap((e) =>
      e.kind !== 'send-message'
        ? []
        : e.message.type === 'attachment'
          ? [e.message.url]
          : e.message.type === 'text'
            ? (e.message.images ?? []).map((i) => i.url)
            : [],
    );
    expect(urls).toHaveLength(2);
    for (const url of urls) expect(url.startsWith(`file://${newAttachments}/`), url).toBe(true);
    const attachment = sends.find((e) => e.kind === 'send-message' && e.message.type === 'attachment')!;
    const sha =
      attachment.kind === 'send-message' && attachment.message.type === 'attachment'
        ? attachment.message.sha256
        : '';
    const served = await mb.box.api(`attachment?agentId=${newId}&sha256=${sha}`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe('png-bytes');
  });

  it('the new JSONL is the source JSONL: no time invented, nothing re-encoded', async () => {
    const source = await readFile(path.join(mb.transcriptsDir, sourceId, `${sourceId}.jsonl`), 'utf8');
    const copy = await readFile(path.join(mb.transcriptsDir, newId, `${newId}.jsonl`), 'utf8');
    expect(copy).toBe(source);
    expect(readLedgerFile(path.join(mb.agentsDir, newId, 'store.db')).warnings).toEqual([]);
  });
});

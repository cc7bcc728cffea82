/** The host driving a real OpenAI-compatible provider against a loopback test server. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAiCompatibleProvider } from '../providers/index.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '../testing/openai-server.ts';

let server: OpenAiTestServer;
let fx: HostFixture | undefined;
beforeEach(async () => {
  server = await startOpenAiTestServer();
});
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
  await server.close();
});

// Every delta becomes a draft (no pacing): the scrubbing test sees the stream cut at every word.
const provider = (timeoutMs = 2_000) =>
  openAiCompatibleProvider({
    baseURL: server.baseURL,
    model: 'local',
    timeoutMs,
    maxRetries: 0,
    draftIntervalMs: 0,
  });

describe('host + OpenAI-compatible provider', () => {
  it('answers a malformed tool-call JSON with a model-readable error, then delivers the retry', async () => {
    server.reply(
      {
        kind: 'message',
        toolCalls: [{ id: 'c1', name: 'send_message', arguments: '{"type":"text","content":"Hi' }],
      },
      {
        kind: 'message',
        toolCalls: [{ id: 'c2', name: 'send_message', arguments: '{"type":"text","content":"Hi"}' }],
      },
      { kind: 'message', content: 'done' },
    );
    fx = await hostFixture([], { provider: provider() });
    await fx.prompt('hello');
    const second = server.requests[1]!.body.messages as Array<{
      role: string;
      content: string;
      tool_call_id?: string;
    }>;
    const toolMessage = second.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(toolMessage.content).toContain('not valid JSON');
    // The JSONL keeps what the model wrote, so the malformed call can be read later.
    const records = await fx.records();
    expect(JSON.stringify(records[1])).toContain(JSON.stringify('{"type":"text","content":"Hi'));
    const third = server.requests[2]!.body.messages as Array<{ role: string; content: string }>;
    expect(third.at(-1)!.content).toBe('Message sent to user. (id: t0s0)');
    const entries = await fx.entries();
    expect(entries.filter((e) => e.kind === 'send-message').map((e) => e.id)).toEqual(['t0s0']);
    // The tools the model was offered, under Grok Bot's names.
    const tools = server.requests[0]!.body.tools as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual([
      'send_message',
      'shell',
      'read',
      'write',
      'edit',
      'grep',
      'glob',
      'ls',
      'delete',
      'web_fetch',
      'update_todos',
      'update_state',
      'get_mcp_tools',
      'mcp',
      'await',
      'task',
    ]);
    // The guidance rides in the user turn, never in the system prompt.
    const first = server.requests[0]!.body.messages as Array<{ role: string; content: unknown }>;
    expect(JSON.stringify(first[0])).not.toContain('system_reminder');
    expect(JSON.stringify(first.at(-1))).toContain('<system_reminder>');
  });

  it('tells the model which tools it has when it calls one that does not exist', async () => {
    server.reply(
      {
        kind: 'message',
        toolCalls: [{ id: 'c1', name: 'browse', arguments: '{"url":"https://example.com"}' }],
      },
      {
        kind: 'message',
        toolCalls: [{ id: 'c2', name: 'send_message', arguments: '{"type":"text","content":"ok"}' }],
      },
      { kind: 'message', content: 'done' },
    );
    fx = await hostFixture([], { provider: provider() });
    await fx.prompt('hello');
    const second = server.requests[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(second.at(-1)!.content).toBe(
      'There is no tool named browse. Your tools are: send_message, shell, read, write, edit, grep, glob, ls, delete, web_fetch, update_todos, update_state, get_mcp_tools, mcp, await, task.',
    );
    expect(JSON.stringify((await fx.records())[1])).toContain('"url":"https://example.com"');
  });

  it('names the HTTP status, the rate limit and its retry time when the step timeout cuts the wait for a retry', async () => {
    server.reply({
      kind: 'status',
      status: 429,
      body: { error: { message: 'slow down' } },
      headers: { 'retry-after': '5' },
    });
    fx = await hostFixture([], {
      provider: openAiCompatibleProvider({
        baseURL: server.baseURL,
        model: 'local',
        timeoutMs: 400,
        maxRetries: 2,
      }),
    });
    await fx.prompt('one');
    const notice = (await fx.entries()).find((e) => e.kind === 'notice') as { text: string; level?: string };
    expect(notice.level).toBe('error');
    expect(notice.text).not.toMatch(/Delay was aborted/);
    expect(notice.text).toMatch(/for 400 ms, the idle timeout/);
    expect(notice.text).toMatch(/HTTP 429, rate limited: the provider asks to retry after 5 s/);
  });

  it('records a notice on an HTTP 500 and on a timeout, and stays usable', async () => {
    server.reply({ kind: 'status', status: 500, body: { error: { message: 'boom' } } }, { kind: 'hang' });
    fx = await hostFixture([], { provider: provider(500) });
    await fx.prompt('one');
    await fx.prompt('two');
    const notices = (await fx.entries()).filter((e) => e.kind === 'notice') as Array<{ text: string }>;
    expect(notices).toHaveLength(2);
    expect(notices[0]!.text).toContain('500');
    expect(notices[1]!.text).toMatch(/abort|timeout|timed out/i);
    expect((await fx.host.listAgents())[0]).toMatchObject({ state: 'idle' });
  });
});

describe('streamed drafts of a send', () => {
  it('are paced: a reply streamed at once is told a few times, ending with the whole text', async () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    server.reply(
      {
        kind: 'message',
        toolCalls: [
          { id: 'c1', name: 'send_message', arguments: JSON.stringify({ type: 'text', content: words }) },
        ],
      },
      { kind: 'message', content: 'done' },
    );
    const paced = openAiCompatibleProvider({
      baseURL: server.baseURL,
      model: 'local',
      timeoutMs: 2_000,
      maxRetries: 0,
    });
    fx = await hostFixture([], { provider: paced });
    await fx.prompt('write a long one');
    await fx.host.idle(fx.agentId);
    const drafts = fx.events.flatMap((event) =>
      event.type === 'draft' && event.text !== null ? [event.text] : [],
    );
    // 400 deltas; unpaced, each would be a draft carrying the whole text so far.
    expect(drafts.length).toBeGreaterThan(0);
    expect(drafts.length).toBeLessThan(40);
    expect(drafts.at(-1)).toBe(words);
    for (const draft of drafts) expect(words.startsWith(draft)).toBe(true);
  });

  it('never carry the start of a secret, however the stream cuts it', async () => {
    // A passphrase: the test model streams arguments word by word, so it arrives in pieces.
    const passphrase = 'correct horse battery staple 42';
    const call = (id: string, message: Record<string, unknown>) => ({
      kind: 'message' as const,
      toolCalls: [{ id, name: 'send_message', arguments: JSON.stringify(message) }],
    });
    server.reply(
      call('c1', { type: 'secret-request', secret: { label: 'Passphrase', name: 'PASSPHRASE' } }),
      { kind: 'message', content: 'waiting' },
      call('c2', { type: 'text', content: `Your passphrase is ${passphrase}, keep it safe.` }),
      { kind: 'message', content: 'done' },
    );
    fx = await hostFixture([], { provider: provider() });
    await fx.prompt('set up my vault');
    await fx.host.submitSecret({ agentId: fx.agentId, messageId: 't0s0', value: passphrase });
    await fx.host.idle(fx.agentId);
    const drafts = fx.events.flatMap((event) =>
      event.type === 'draft' && event.text !== null ? [event.text] : [],
    );
    const final = 'Your passphrase is [secret PASSPHRASE redacted], keep it safe.';
    expect(drafts.length).toBeGreaterThan(2);
    expect(drafts.at(-1)).toBe(final);
    for (const draft of drafts) {
      expect(final.startsWith(draft), draft).toBe(true);
      expect(draft).not.toMatch(/correct/);
    }
    expect((await fx.entries()).some((entry) => JSON.stringify(entry).includes(final))).toBe(true);
  });
});

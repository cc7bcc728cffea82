/**
 * Compaction through the real box: a scripted model on a small window, real files. What the model
 * receives is checked request by request, with gpt-tokenizer counting the whole request as JSON
 * (system, tool schemas and messages), which is more than the model is charged for.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider, type ScriptedStep, type ScriptedProvider } from '../providers/scripted.ts';
import type { ModelMessage, ModelStepRequest } from '../providers/types.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { readFile } from 'node:fs/promises';
import { grokBot } from '@sendbox/txcript';

const WINDOW = 10_000;
const TXCRIPT = fileURLToPath(new URL('../../../txcript/bin/txcript.mjs', import.meta.url));

/** `txcript view` of an agent of the data dir, as a user runs it. */
function txcriptView(dir: string, id: string): string {
  const run = spawnSync(process.execPath, [TXCRIPT, 'view', id, '--from', 'grok_bot'], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      TXCRIPT_GROK_BOT_ROOT: `${dir}/agent-transcripts`,
      TXCRIPT_GROK_BOT_AGENTS: `${dir}/agents`,
      TXCRIPT_NO_CACHE: '1',
      NO_COLOR: '1',
    },
  });
  if (run.status !== 0) throw new Error(`txcript view exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}

let dataDir: string | undefined;
const extraDirs: string[] = [];
const hosts: LocalAgentHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
  for (const dir of extraDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/**
 * Requests as JSON with what differs between two boxes by construction replaced: the data dir and
 * the agent's id (its sandbox path) and the tool call ids a scripted model numbers from its start (numbered here
 * in the order they appear).
 */
function normalised(requests: readonly ModelStepRequest[], box: { id: string; dir: string }): unknown {
  const ids = new Map<string, string>();
  return JSON.parse(
    JSON.stringify(requests.map((r) => ({ system: r.system, tools: r.tools, messages: r.messages })))
      .replaceAll(box.dir, '<data dir>')
      .replaceAll(box.id, '<agent>')
      .replace(/"(toolCallId)":"([^"]+)"/g, (_m, key: string, id: string) => {
        if (!ids.has(id)) ids.set(id, `call-${ids.size}`);
        return `"${key}":"${ids.get(id)}"`;
      }),
  ) as unknown;
}

function textOf(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

function requestTokens(request: ModelStepRequest): number {
  const opts = { disallowedSpecial: new Set<string>() };
  let n = countTokens(request.system, opts) + countTokens(JSON.stringify(request.tools), opts);
  for (const message of request.messages) n += countTokens(JSON.stringify(message), opts);
  return n;
}

const isSummaryCall = (request: ModelStepRequest) => request.tools.length === 0;

/** Words that do not compress into a few tokens. */
function prose(seed: number, bytes: number): string {
  const words = ['harbor', 'lantern', 'quartz', 'meadow', 'ribbon', 'cobalt', 'saffron', 'glacier', 'tundra'];
  let out = '';
  let x = seed * 7919 + 17;
  while (out.length < bytes) {
    x = (x * 48271) % 2147483647;
    out += `${words[x % words.length]}${x % 100} `;
  }
  return out.slice(0, bytes);
}

/**
 * The agent's behaviour in every turn: read the turn's file, tell the user, stop. Summary
 * requests (no tools) get `summary(n)`, which may throw to fail the call.
 */
function agentScript(summary: (n: number) => ScriptedStep) {
  let summaries = 0;
  return (request: ModelStepRequest): ScriptedStep => {
    if (isSummaryCall(request)) return summary(++summaries);
    const messages = request.messages;
    let start = -1;
    let turn = -1;
    messages.forEach((m, i) => {
      const tag = m.role === 'user' ? /^\[t(\d+)u\]\n/.exec(textOf(m)) : null;
      if (tag) {
        start = i;
        turn = Number(tag[1]);
      }
    });
    const steps = messages.slice(start + 1).filter((m) => m.role === 'assistant').length;
    if (steps === 0) return { toolCalls: [{ name: 'read', input: { path: `file-${turn}.txt` } }] };
    if (steps === 1) {
      return {
        toolCalls: [{ name: 'send_message', input: { type: 'text', content: `Read file ${turn}.` } }],
      };
    }
    return {};
  };
}

async function openBox(model: ScriptedProvider, window = WINDOW): Promise<LocalAgentHost> {
  const host = await createAgentHost({
    dataDir: dataDir!,
    provider: model,
    env: { SENDBOX_MODEL_CONTEXT_TOKENS: String(window) },
  });
  hosts.push(host);
  return host;
}

async function setUp(summary: (n: number) => ScriptedStep, window = WINDOW) {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-compaction-'));
  const model = scriptedProvider(agentScript(summary));
  const host = await openBox(model, window);
  const { id } = await host.createAgent({ name: 'Long-lived' });
  const paths = agentPaths(dataDir, id);
  let nonce = 0;
  const turn = async (h: LocalAgentHost, n: number, bytes = 1_000) => {
    await writeFile(path.join(paths.sandbox, `file-${n}.txt`), prose(n + 1000, bytes));
    await h.sendPrompt({ agentId: id, prompt: `Turn ${n}: ${prose(n, bytes)}`, clientNonce: `n${++nonce}` });
    await h.idle(id);
  };
  return { model, host, id, paths, turn };
}

async function jsonlRecords(file: string): Promise<Array<Record<string, unknown>>> {
  const parsed = grokBot.text.parse(await readFile(file, 'utf8'), file);
  return parsed.records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
}

describe('compaction', () => {
  it('keeps 40 turns of 2 KB within a 10,000-token window, tool schemas included, and never rewrites the JSONL', async () => {
    const { model, host, id, paths, turn } = await setUp((n) => ({
      text: `Summary ${n}: the user sent numbered turns of prose; you read file-N.txt each time and told them.`,
    }));
    let before = '';
    for (let n = 0; n < 40; n++) {
      await turn(host, n);
      const now = await readFile(paths.jsonl, 'utf8');
      // Appends only: every byte written before is still there, in place.
      expect(now.startsWith(before)).toBe(true);
      before = now;
    }
    const sizes = model.requests.map(requestTokens);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
    // Without compaction the last request would hold all 40 turns (about 40 × 600 tokens).
    const last = model.requests.filter((r) => !isSummaryCall(r)).at(-1)!;
    expect(last.messages.some((m) => textOf(m).includes('Turn 0:'))).toBe(false);
    // Old outputs were pruned, summaries were written (hidden JSONL records), and every turn was answered.
    expect(model.requests.some((r) => JSON.stringify(r.messages).includes('Pruned from your context'))).toBe(
      true,
    );
    const summaries = model.requests.filter(isSummaryCall);
    expect(summaries.length).toBeGreaterThan(0);
    const records = await jsonlRecords(paths.jsonl);
    const hidden = records.filter((r) =>
      JSON.stringify(r).includes('[SAND_HIDDEN_PROMPT][summary] Your memory of this conversation before [t'),
    );
    expect(hidden.length).toBe(summaries.length);
    // The JSONL holds every turn whole: the first prompt and the first file are still there.
    const jsonl = await readFile(paths.jsonl, 'utf8');
    expect(jsonl).toContain(prose(0, 1_000).slice(0, 200));
    expect(jsonl).toContain(prose(1000, 1_000).slice(0, 200));
    const entries = await host.entriesAfter(id, 0);
    expect(entries.filter((e) => e.kind === 'send-message')).toHaveLength(40);
    // The conversation shows a marker where the model's memory was summarised.
    const markers = entries.filter((e) => (e as { reason?: string }).reason === 'context-summarized');
    expect(markers).toHaveLength(summaries.length);
    // The newest view starts with the newest summary.
    expect(textOf(last.messages[0]!)).toContain(`Summary ${summaries.length}:`);
  }, 120_000);

  it('keeps 40 turns of 2 KB within an 8,000-token window (the issue’s figure), tool schemas included; every turn answered, the JSONL only appended to', async () => {
    // The system prompt and the tool schemas alone take about 4,000 of the 8,000 tokens here, so
    // the conversation has little room: the box summarises often, and must still never send more.
    const small = 8_000;
    const { model, host, id, paths, turn } = await setUp(
      (n) => ({
        text: `Summary ${n}: numbered turns of prose; you read file-N.txt each time and told the user.`,
      }),
      small,
    );
    let before = '';
    for (let n = 0; n < 40; n++) {
      await turn(host, n);
      const now = await readFile(paths.jsonl, 'utf8');
      expect(now.startsWith(before)).toBe(true);
      before = now;
    }
    const first = model.requests[0]!;
    const opts = { disallowedSpecial: new Set<string>() };
    const fixed = countTokens(first.system, opts) + countTokens(JSON.stringify(first.tools), opts);
    expect(fixed).toBeGreaterThan(small / 3); // the case this test is about: a tight window
    const sizes = model.requests.map(requestTokens);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(small);
    // Without compaction the 40 turns (about 24,000 tokens) could not fit at all.
    const regular = model.requests.filter((r) => !isSummaryCall(r));
    expect(regular.at(-1)!.messages.some((m) => textOf(m).includes('Turn 0:'))).toBe(false);
    expect(model.requests.some(isSummaryCall)).toBe(true);
    const entries = await host.entriesAfter(id, 0);
    expect(entries.filter((e) => e.kind === 'send-message')).toHaveLength(40);
    // No turn fell back to truncation: every compaction was a summary the model wrote.
    expect(entries.filter((e) => (e as { reason?: string }).reason === 'context-truncated')).toEqual([]);
    const jsonl = await readFile(paths.jsonl, 'utf8');
    expect(jsonl).toContain(prose(0, 1_000).slice(0, 200));
  }, 120_000);

  it('gives the first call after a restart the view the last call before it had', async () => {
    const { model, host, id, turn } = await setUp((n) => ({ text: `Summary ${n} of the turns so far.` }));
    for (let n = 0; n < 14; n++) await turn(host, n);
    expect(model.requests.some(isSummaryCall)).toBe(true);
    const lastBefore = model.requests.filter((r) => !isSummaryCall(r)).at(-1)!;
    await host.close();
    hosts.splice(0);
    // txcript reads the whole conversation back: every turn, and each summary marked hidden.
    const view = txcriptView(dataDir!, id);
    expect(view).toContain('Turn 0:');
    expect(view).toContain('Read file 13.');
    expect(view).toMatch(
      /\(hidden: summary\) \[SAND_HIDDEN_PROMPT\]\[summary\] Your memory of this conversation before \[t\d+u\]/,
    );

    const again = scriptedProvider(agentScript(() => ({ text: 'unused' })));
    const reopened = await openBox(again);
    await reopened.sendPrompt({ agentId: id, prompt: 'one more', clientNonce: 'after-restart' });
    await reopened.idle(id);
    const firstAfter = again.requests[0]!;
    expect(firstAfter.system).toBe(lastBefore.system);
    expect(firstAfter.tools).toEqual(lastBefore.tools);
    // The same messages, then the new prompt.
    expect(firstAfter.messages.slice(0, lastBefore.messages.length)).toEqual(lastBefore.messages);
    expect(textOf(firstAfter.messages.at(-1)!)).toContain('one more');
    // Its own sends read back as it sent them, not in the JSONL's `{text:{content}}` form.
    const sends = firstAfter.messages.flatMap((m) =>
      m.role === 'assistant' && typeof m.content !== 'string'
        ? m.content.filter((p) => p.type === 'tool-call' && p.toolName === 'send_message')
        : [],
    );
    expect(sends.length).toBeGreaterThan(0);
    for (const call of sends) {
      const input = (call as { input: { type: string; content: string } }).input;
      expect(Object.keys(input).sort()).toEqual(['content', 'type']);
      expect(input.type).toBe('text');
      expect(input.content).toMatch(/^Read file \d+\.$/);
    }
  }, 120_000);

  it('sends after a restart exactly what a box that never stopped sends, also when a summary falls due on the first call', async () => {
    // A model that reports its usage (about 1.4 times what o200k counts), so the box's estimate is
    // calibrated: a restart must start from the same factor to make the same window decisions.
    const reporting = () => {
      const script = agentScript(() => ({ text: 'Summary of the turns so far.' }));
      return scriptedProvider((request) => ({
        ...script(request),
        inputTokens: Math.round(requestTokens(request) * 1.4),
      }));
    };
    /** A box of its own on a data dir of its own; `turn(n)` sends turn n and waits for it. */
    const twin = async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-compaction-twin-'));
      extraDirs.push(dir);
      const open = async (model: ScriptedProvider) => {
        const host = await createAgentHost({
          dataDir: dir,
          provider: model,
          env: { SENDBOX_MODEL_CONTEXT_TOKENS: String(WINDOW) },
        });
        hosts.push(host);
        return host;
      };
      let model = reporting();
      let host = await open(model);
      const { id } = await host.createAgent({ name: 'Long-lived' });
      const sandbox = agentPaths(dir, id).sandbox;
      return {
        id,
        dir,
        model: () => model,
        async turn(n: number) {
          await writeFile(path.join(sandbox, `file-${n}.txt`), prose(n + 1000, 1_000));
          await host.sendPrompt({
            agentId: id,
            prompt: `Turn ${n}: ${prose(n, 1_000)}`,
            clientNonce: `n${n}`,
          });
          await host.idle(id);
        },
        async restart() {
          await host.close();
          model = reporting();
          host = await open(model);
        },
      };
    };
    // The box that never stops: turns until one whose first call writes a summary.
    const live = await twin();
    let due = -1;
    let from = 0;
    for (let n = 0; n < 30 && due < 0; n++) {
      from = live.model().requests.length;
      await live.turn(n);
      if (n > 0 && isSummaryCall(live.model().requests[from]!)) due = n;
    }
    expect(due).toBeGreaterThan(0);
    const liveCalls = live.model().requests.slice(from);
    // The same turns in a second box, stopped and started again just before that turn.
    const restarted = await twin();
    for (let n = 0; n < due; n++) await restarted.turn(n);
    await restarted.restart();
    await restarted.turn(due);
    const after = restarted.model().requests;
    expect(isSummaryCall(after[0]!)).toBe(true);
    expect(normalised(after, restarted)).toEqual(normalised(liveCalls, live));
  }, 240_000);

  it('keeps a widget left open before the summary answerable, and tells the model it is open', async () => {
    const { model, host, id, turn } = await setUp((n) => ({ text: `Summary ${n}.` }));
    const widget = {
      type: 'widget',
      widget: {
        prompt: 'Which colour?',
        options: [
          { label: 'Red', value: 'red' },
          { label: 'Blue', value: 'blue' },
        ],
      },
    };
    model.requests.length = 0;
    // Turn 0 asks; the user does not answer and talks about other things for a while.
    const asking = scriptedProvider([{ toolCalls: [{ id: 'w', name: 'send_message', input: widget }] }]);
    const first = await (async () => {
      await host.close();
      hosts.splice(0);
      return openBox(asking);
    })();
    await first.sendPrompt({ agentId: id, prompt: 'Ask me about colours', clientNonce: 'ask' });
    await first.idle(id);
    await first.close();
    hosts.splice(0);
    const reopened = await openBox(model);
    for (let n = 1; n < 10; n++) await turn(reopened, n);
    const summaries = model.requests.filter(isSummaryCall);
    expect(summaries.length).toBeGreaterThan(0);
    const afterSummary = model.requests.filter((r) => !isSummaryCall(r)).at(-1)!;
    expect(afterSummary.messages.some((m) => textOf(m).includes('Ask me about colours'))).toBe(false);
    expect(textOf(afterSummary.messages[0]!)).toContain(
      't0s0 (widget): Which colour? \u2014 options: Red / Blue',
    );
    // The user answers the old widget now: accepted, and the model reads the answer.
    await reopened.answerWidget({ agentId: id, messageId: 't0s0', answer: 'red' });
    await reopened.idle(id);
    const answered = model.requests.filter((r) => !isSummaryCall(r)).at(-1)!;
    expect(JSON.stringify(answered.messages)).toContain('[Answering your question t0s0');
  }, 120_000);

  it('falls back to leaving old turns out, with a notice, when the summary call fails; the turn goes on', async () => {
    const { model, host, id, turn } = await setUp(() => ({ error: new Error('summary service down') }));
    for (let n = 0; n < 10; n++) await turn(host, n);
    expect(model.requests.some(isSummaryCall)).toBe(true);
    const regular = model.requests.filter((r) => !isSummaryCall(r));
    expect(Math.max(...regular.map(requestTokens))).toBeLessThanOrEqual(WINDOW);
    expect(JSON.stringify(regular.at(-1)!.messages)).toContain(
      'Earlier messages of this conversation are left out',
    );
    const entries = await host.entriesAfter(id, 0);
    const notices = entries.filter((e) => (e as { reason?: string }).reason === 'context-truncated');
    expect(notices.length).toBeGreaterThan(0);
    expect((notices[0] as { text: string }).text).toContain('summary service down');
    // Every turn still answered the user; no turn failed.
    expect(entries.filter((e) => e.kind === 'send-message')).toHaveLength(10);
    expect(entries.some((e) => (e as { level?: string }).level === 'error')).toBe(false);
    // Nothing was recorded as a summary.
    expect(JSON.stringify(await jsonlRecords(agentPaths(dataDir!, id).jsonl))).not.toContain('[summary]');
  }, 120_000);
});

/**
 * Test fixture: a `LocalAgentHost` on a fresh temp data dir with a scripted
 * model, plus readers for what it wrote. Never used outside tests.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { grokBot, readLedgerFile } from '@sendbox/txcript';
import { createAgentHost, type AgentHostOptions, type LocalAgentHost } from '../host/agent-host.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { HostEvent } from '../agent/events.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { scriptedProvider, type ScriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import type { ModelProvider } from '../providers/types.ts';

export interface HostFixture {
  dataDir: string;
  host: LocalAgentHost;
  model: ScriptedProvider;
  events: HostEvent[];
  agentId: string;
  /** Sends a prompt and waits for the turn to end. */
  prompt(text: string, nonce?: string): Promise<void>;
  entries(): Promise<SequencedEntry[]>;
  jsonlText(): Promise<string>;
  /** The JSONL as record objects, through the grok_bot text codec. */
  records(): Promise<Array<Record<string, unknown>>>;
  sandbox: string;
  dispose(): Promise<void>;
}

let nonceCounter = 0;

export async function hostFixture(
  script: ScriptedStep[] = [],
  options: Partial<AgentHostOptions> & { provider?: ModelProvider | null } = {},
): Promise<HostFixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-host-'));
  const model = scriptedProvider(script);
  const host = await createAgentHost({ dataDir, provider: model, env: {}, ...options });
  const events: HostEvent[] = [];
  host.subscribe((event) => events.push(event));
  const agent = await host.createAgent({ name: 'Test agent' });
  const paths = agentPaths(dataDir, agent.id);
  const fixture: HostFixture = {
    dataDir,
    host,
    model,
    events,
    agentId: agent.id,
    sandbox: paths.sandbox,
    async prompt(text, nonce = `nonce-${++nonceCounter}`) {
      await host.sendPrompt({ agentId: agent.id, prompt: text, clientNonce: nonce });
      await host.idle(agent.id);
    },
    entries: () => host.entriesAfter(agent.id, 0),
    jsonlText: () => readFile(paths.jsonl, 'utf8'),
    async records() {
      const parsed = grokBot.text.parse(await fixture.jsonlText(), paths.jsonl);
      return parsed.records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
    },
    async dispose() {
      await host.close();
      // A test that restarts the box puts its new host here: closed too, or its stores' handles leak.
      if (fixture.host !== host) await fixture.host.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

export function ledgerOnDisk(dataDir: string, agentId: string) {
  return readLedgerFile(agentPaths(dataDir, agentId).storeDb);
}

/** The text of the last user message the model saw in a request. */
export function lastUserText(model: ScriptedProvider, requestIndex: number): string {
  const request = model.requests[requestIndex];
  if (!request) throw new Error(`the model got no request #${requestIndex}`);
  const users = request.messages.filter((m) => m.role === 'user');
  const last = users.at(-1);
  if (!last) return '';
  return typeof last.content === 'string'
    ? last.content
    : last.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** Tool results the model saw in a request's last message, as text. */
export function lastToolOutputs(model: ScriptedProvider, requestIndex: number): string[] {
  const request = model.requests[requestIndex];
  if (!request) throw new Error(`the model got no request #${requestIndex}`);
  const last = request.messages.at(-1);
  if (!last || last.role !== 'tool') return [];
  return last.content.flatMap((part) =>
    part.type === 'tool-result' && (part.output.type === 'text' || part.output.type === 'error-text')
      ? [part.output.value]
      : [],
  );
}

/** A scripted model step that sends one text bubble. */
export const sendText = (content: string) => ({
  toolCalls: [{ name: 'send_message', input: { type: 'text', content } }],
});

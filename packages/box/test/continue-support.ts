/**
 * Shared pieces of the `txcript continue` suites: a real box (host + gateway
 * on an ephemeral loopback port, temp data dir, scripted model) with the
 * environment txcript needs to reach it, a snapshot of what the box holds,
 * the reference conversation, and its block signature.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Block, Transcript } from '@sendbox/txcript';
import { scriptedProvider, type ScriptedProvider } from '../src/providers/scripted.ts';
import { startTestBox, type TestBox } from '../src/gateway/test-support.ts';

export interface MintBox {
  box: TestBox;
  model: ScriptedProvider;
  /** HOME for txcript: an empty temp folder, so nothing of the real user is read. */
  home: string;
  /** The environment that points txcript at this box (roots and gateway overrides). */
  env: Record<string, string>;
  agentsDir: string;
  transcriptsDir: string;
  /** An agent that exists before any mint (the mint opens it to unlock the new agent's store). */
  existingId: string;
  snapshot(): Promise<BoxSnapshot>;
  rosterIds(): Promise<string[]>;
  close(): Promise<void>;
}

export interface BoxSnapshot {
  roster: string[];
  agentDirs: string[];
  transcriptDirs: string[];
}

async function list(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

export async function startMintBox(model: ScriptedProvider = scriptedProvider([])): Promise<MintBox> {
  const box = await startTestBox(model);
  const home = await mkdtemp(path.join(os.tmpdir(), 'txcript-continue-home-'));
  const agentsDir = path.join(box.dataDir, 'agents');
  const transcriptsDir = path.join(box.dataDir, 'agent-transcripts');
  const created = await box.call('createAgent', { name: 'Existing agent' });
  if (created.status !== 200) throw new Error(`createAgent failed: ${JSON.stringify(created.body)}`);
  const existingId = (created.body as { agent: { id: string } }).agent.id;
  const env = {
    HOME: home,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TXCRIPT_GROK_BOT_AGENTS: agentsDir,
    TXCRIPT_GROK_BOT_ROOT: transcriptsDir,
    TXCRIPT_GROK_BOT_GATEWAY: box.gateway.url,
    TXCRIPT_GROK_BOT_TOKEN: box.gateway.token,
  };
  const rosterIds = async (): Promise<string[]> => {
    const { status, body } = await box.call('listAgents', {});
    if (status !== 200) throw new Error(`listAgents failed: ${JSON.stringify(body)}`);
    return (body as Array<{ id: string }>).map((row) => row.id).sort();
  };
  return {
    box,
    model,
    home,
    env,
    agentsDir,
    transcriptsDir,
    existingId,
    rosterIds,
    snapshot: async () => ({
      roster: await rosterIds(),
      agentDirs: await list(agentsDir),
      transcriptDirs: await list(transcriptsDir),
    }),
    async close() {
      await box.close();
      await rm(home, { recursive: true, force: true });
    },
  };
}

const T0 = Date.parse('2026-09-10T12:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace('.000Z', 'Z');

/**
 * One conversation with every shape the hops must carry: text, thinking, a
 * Bash call whose result is an error, an Edit, a Raw tool with a JSON
 * result, and an orphan result (its call is not in the transcript).
 */
export function referenceConversation(id = 'reference-run'): Transcript {
  return {
    meta: { id, timestamp: at(0), title: 'Fix the pagination test' },
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: 'The pagination test fails; fix it.' }],
        timestamp: at(0),
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'Run the tests first to see the failure.' },
          { type: 'text', text: 'Running the tests.' },
          { type: 'tool_use', id: 'call_bash_1', tool: { name: 'Bash', command: 'npm test' } },
        ],
        timestamp: at(1),
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_bash_1',
            content: '1 failed: page 2 is empty',
            is_error: true,
          },
        ],
        timestamp: at(2),
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'call_edit_1',
            tool: { name: 'Edit', file_path: 'src/page.ts', old_string: 'i <= n', new_string: 'i < n' },
          },
        ],
        timestamp: at(3),
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_edit_1', content: 'edited src/page.ts' }],
        timestamp: at(4),
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'call_raw_1',
            tool: { name: 'Raw', tool_name: 'web_search', input: { searchTerm: 'off by one pagination' } },
          },
        ],
        timestamp: at(5),
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'call_raw_1',
            content: { references: [{ title: 'Off-by-one errors', chunk: 'use < not <=' }] },
          },
        ],
        timestamp: at(6),
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_ghost_9', content: 'stray output' }],
        timestamp: at(7),
      },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Fixed: the loop stopped one page late. The test passes now.' }],
        timestamp: at(8),
      },
    ],
  };
}

/** One block of a signature: `role block [tool] [error]`. */
function blockSignature(role: string, block: Block, toolNames: Map<string, string>): string {
  switch (block.type) {
    case 'tool_use': {
      const name = block.tool.name === 'Raw' ? `Raw:${block.tool.tool_name}` : block.tool.name;
      return `${role} tool_use ${name}`;
    }
    case 'tool_result':
      return `${role} tool_result ${toolNames.get(block.tool_use_id) ?? '(orphan)'}${block.is_error === true ? ' error' : ''}`;
    case 'text':
    case 'thinking':
    case 'image':
    case 'artifact':
      return `${role} ${block.type}`;
  }
}

/**
 * The conversation's shape: role + block type + tool name + is_error, one
 * entry per block, in order. Message boundaries are left out on purpose:
 * Codex writes one item per block and reads one message per item, so the
 * same blocks come back split into more messages.
 */
export function signature(transcript: Transcript): string[] {
  const toolNames = new Map<string, string>();
  for (const m of transcript.messages) {
    for (const b of m.content) {
      if (b.type === 'tool_use')
        toolNames.set(b.id, b.tool.name === 'Raw' ? `Raw:${b.tool.tool_name}` : b.tool.name);
    }
  }
  return transcript.messages.flatMap((m) => m.content.map((b) => blockSignature(m.role, b, toolNames)));
}

/** Every text a person wrote or read (user and assistant text blocks), in order. */
export function texts(transcript: Transcript): string[] {
  return transcript.messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])));
}

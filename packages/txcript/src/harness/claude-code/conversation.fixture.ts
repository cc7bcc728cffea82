/**
 * Test material shared by the Claude Code and Codex tests: one Common
 * conversation holding every case the cross-harness trip must keep, and the
 * block signature compared after each hop.
 */
import type { Block, Transcript } from '../../model/common.ts';

export const ORPHAN_ID = 'toolu_orphan';

/** Text, thinking, Bash, Edit, a Raw tool, an error result and an orphan result. */
export function sampleConversation(): Transcript {
  const ts = (s: number): string => new Date(Date.UTC(2026, 0, 2, 3, 4, s)).toISOString();
  return {
    meta: {
      id: '11111111-2222-4333-8444-555555555555',
      timestamp: ts(0),
      cwd: '/home/dev/app',
      git_branch: 'main',
      title: 'Fix the parser',
      cli_version: '2.0.14',
      model: 'claude-sonnet-4-5',
    },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Fix the parser\nplease' }], timestamp: ts(1) },
      {
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        timestamp: ts(2),
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3 },
        content: [
          { type: 'thinking', text: 'Look at the tests first.', signature: 'sig-abc' },
          { type: 'text', text: 'Running the tests.' },
          {
            type: 'tool_use',
            id: 'toolu_bash',
            tool: { name: 'Bash', command: 'npm test', timeout_ms: 60000 },
          },
        ],
      },
      {
        role: 'user',
        timestamp: ts(3),
        content: [{ type: 'tool_result', tool_use_id: 'toolu_bash', content: '1 failing', is_error: true }],
      },
      {
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        timestamp: ts(4),
        content: [
          {
            type: 'tool_use',
            id: 'toolu_edit',
            tool: { name: 'Edit', file_path: '/home/dev/app/p.ts', old_string: 'a', new_string: 'b' },
          },
          {
            type: 'tool_use',
            id: 'toolu_raw',
            tool: { name: 'Raw', tool_name: 'WebFetch', input: { url: 'https://x.test' } },
          },
        ],
      },
      {
        role: 'user',
        timestamp: ts(5),
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_edit', content: 'ok' },
          { type: 'tool_result', tool_use_id: 'toolu_raw', content: 'page' },
          { type: 'tool_result', tool_use_id: ORPHAN_ID, content: 'stray output' },
        ],
      },
      {
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        timestamp: ts(6),
        stop_reason: 'end_turn',
        content: [{ type: 'text', text: 'Fixed.' }],
      },
    ],
  };
}

/** The order and kind of every block (roles, tool names, error flags), ignoring how blocks group into messages. */
export function blockSignature(t: Transcript): string[] {
  return t.messages.flatMap((m) => m.content.map((b) => `${m.role}:${describe(b)}`));
}

function describe(b: Block): string {
  switch (b.type) {
    case 'text':
      return `text:${b.text}`;
    case 'thinking':
      return `thinking:${b.text}`;
    case 'tool_use':
      return `tool_use:${b.id}:${b.tool.name === 'Raw' ? `Raw(${b.tool.tool_name})` : b.tool.name}`;
    case 'tool_result':
      return `tool_result:${b.tool_use_id}${b.is_error === true ? ':error' : ''}`;
    case 'image':
      return `image:${b.source.media_type}`;
    case 'artifact':
      return `artifact:${b.artifact.name}`;
  }
}

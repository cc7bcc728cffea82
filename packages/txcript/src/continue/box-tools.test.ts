/** Foreign tool calls of a continued session take the box's tool names; the rest stay as they were. */
import { describe, expect, it } from 'vitest';
import type { Tool, Transcript } from '../model/common.ts';
import { BOX_TOOL, toBoxTool, withBoxTools } from './box-tools.ts';

const raw = (tool_name: string, input: object = {}): Tool => ({
  name: 'Raw',
  tool_name,
  input: input as Record<string, never>,
});

describe('toBoxTool', () => {
  it('renames typed Write, Edit and MultiEdit, with file_path as the box path', () => {
    expect(toBoxTool({ name: 'Write', file_path: '/w/a.ts', content: 'x' })).toEqual(
      raw('write', { path: '/w/a.ts', content: 'x' }),
    );
    // Edit is the box's edit already: Grok Bot's codec writes it so (path for file_path).
    const edit: Tool = { name: 'Edit', file_path: '/w/a.ts', old_string: 'a', new_string: 'b' };
    expect(toBoxTool(edit)).toBe(edit);
    expect(toBoxTool({ name: 'MultiEdit', file_path: '/w/a.ts', edits: [] })).toEqual(
      raw('edit', { path: '/w/a.ts', edits: [] }),
    );
  });

  it('renames the search, web and todo tools of Claude Code, Codex and OpenCode', () => {
    expect(toBoxTool(raw('Grep', { pattern: 'x', path: 'src' }))).toEqual(
      raw('grep', { pattern: 'x', path: 'src' }),
    );
    expect(toBoxTool(raw('Glob', { pattern: '*.ts' }))).toEqual(raw('glob', { pattern: '*.ts' }));
    expect(toBoxTool(raw('LS', { path: '/w' }))).toEqual(raw('ls', { path: '/w' }));
    expect(toBoxTool(raw('WebFetch', { url: 'https://x' }))).toEqual(raw('web_fetch', { url: 'https://x' }));
    expect(toBoxTool(raw('WebSearch', { query: 'q' }))).toEqual(raw('web_search', { query: 'q' }));
    expect(toBoxTool(raw('TodoWrite', { todos: [] }))).toEqual(raw('update_todos', { todos: [] }));
    expect(toBoxTool(raw('update_plan', { plan: [] }))).toEqual(raw('update_todos', { plan: [] }));
    expect(toBoxTool(raw('apply_patch', { input: '*** Begin Patch' }))).toEqual(
      raw('edit', { input: '*** Begin Patch' }),
    );
    expect(toBoxTool(raw('webfetch', { url: 'u' }))).toEqual(raw('web_fetch', { url: 'u' }));
  });

  it('leaves Bash and Read typed (Grok Bot writes them as shell and read), box tools and unknown tools alone', () => {
    const bash: Tool = { name: 'Bash', command: 'ls' };
    expect(toBoxTool(bash)).toBe(bash);
    const read: Tool = { name: 'Read', file_path: '/a' };
    expect(toBoxTool(read)).toBe(read);
    for (const tool of [
      raw('shell', { command: 'ls' }),
      raw('send_message', {}),
      raw('Task', { prompt: 'p' }),
    ])
      expect(toBoxTool(tool)).toBe(tool);
    // A path of its own wins over file_path.
    expect(toBoxTool(raw('Write', { path: 'p', file_path: 'f' }))).toEqual(
      raw('write', { path: 'p', file_path: 'f' }),
    );
  });

  it('maps only onto tools the box has', () => {
    const box = [
      'shell',
      'read',
      'write',
      'edit',
      'delete',
      'grep',
      'glob',
      'ls',
      'web_fetch',
      'web_search',
      'update_todos',
    ];
    expect([...new Set(Object.values(BOX_TOOL))].sort()).toEqual([...box].sort());
  });
});

describe('withBoxTools', () => {
  it('renames every call of a transcript and shares what it does not change', () => {
    const t: Transcript = {
      meta: { id: 's', timestamp: '2026-01-01T00:00:00Z' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: '2026-01-01T00:00:00Z' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'c1', tool: raw('Grep', { pattern: 'x' }) }],
          timestamp: '2026-01-01T00:00:01Z',
        },
      ],
    };
    const boxed = withBoxTools(t);
    expect(boxed.messages[0]).toBe(t.messages[0]);
    expect(boxed.messages[1]!.content[0]).toEqual({
      type: 'tool_use',
      id: 'c1',
      tool: raw('grep', { pattern: 'x' }),
    });
    expect(t.messages[1]!.content[0]).toMatchObject({ tool: { tool_name: 'Grep' } });
    const plain = { ...t, messages: [t.messages[0]!] };
    expect(withBoxTools(plain)).toBe(plain);
  });
});

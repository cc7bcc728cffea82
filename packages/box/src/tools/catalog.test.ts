import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { detectConfinement } from '../sandbox/confinement.ts';
import { toolCatalog, toolsForProfile } from './catalog.ts';

const WORK_TOOLS = ['shell', 'read', 'write', 'edit', 'grep', 'glob', 'ls', 'delete'];

describe('the tool catalog', () => {
  it("gives each tool once, under Grok Bot's on-disk name, with an input the model can be shown", async () => {
    const tools = toolCatalog({
      confinement: await detectConfinement(),
      search: { name: 'searxng', search: () => Promise.resolve([]) },
      pageFetch: (url, init) => fetch(url, init),
    });
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual([
      ...WORK_TOOLS,
      'web_search',
      'web_fetch',
      'update_todos',
      'update_state',
      'get_mcp_tools',
      'mcp',
      'await',
      'task',
    ]);
    // send_message is dispatched through its send gate, never as a catalog tool.
    expect(new Set(names).size).toBe(names.length);
    for (const tool of tools) {
      expect(tool.description, tool.name).not.toBe('');
      expect(z.toJSONSchema(tool.input, { target: 'draft-7', io: 'input' }), tool.name).toHaveProperty(
        'type',
        'object',
      );
    }
  });

  it('offers web_search only with a backend, and web_fetch only with a way to fetch', async () => {
    const names = toolCatalog({ confinement: await detectConfinement() }).map((tool) => tool.name);
    expect(names).toEqual([
      ...WORK_TOOLS,
      'update_todos',
      'update_state',
      'get_mcp_tools',
      'mcp',
      'await',
      'task',
    ]);
  });

  it('withholds web_fetch from an agent whose profile says web.fetch "off"', async () => {
    const tools = toolCatalog({
      confinement: await detectConfinement(),
      pageFetch: (url, init) => fetch(url, init),
    });
    const names = (web?: { fetch?: 'on' | 'off' }) => toolsForProfile(tools, { web }).map((t) => t.name);
    expect(names()).toContain('web_fetch');
    expect(names({ fetch: 'on' })).toContain('web_fetch');
    expect(names({ fetch: 'off' })).not.toContain('web_fetch');
    expect(names({ fetch: 'off' })).toContain('read');
  });
});

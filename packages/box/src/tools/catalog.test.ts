import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { detectConfinement } from '../sandbox/confinement.ts';
import { toolCatalog } from './catalog.ts';

describe('the tool catalog', () => {
  it("gives each tool once, under Grok Bot's on-disk name, with an input the model can be shown", async () => {
    const tools = toolCatalog({ confinement: await detectConfinement() });
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(['shell', 'read', 'write', 'update_todos']);
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
});

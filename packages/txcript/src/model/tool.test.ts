import { describe, expect, it } from 'vitest';
import { toolFromCanonical, toolToCanonical } from './tool.ts';
import { uuidV5 } from './uuid.ts';

describe('toolFromCanonical', () => {
  it('types an exact Bash input', () => {
    expect(toolFromCanonical('Bash', { command: 'ls', timeout_ms: 5 })).toEqual({
      name: 'Bash',
      command: 'ls',
      timeout_ms: 5,
    });
  });
  it('falls back to Raw on an unknown key, keeping it', () => {
    const input = { command: 'ls', extra: 1 };
    expect(toolFromCanonical('Bash', input)).toEqual({ name: 'Raw', tool_name: 'Bash', input });
  });
  it('falls back to Raw on a wrongly typed value', () => {
    expect(toolFromCanonical('Read', { file_path: 3 }).name).toBe('Raw');
    expect(toolFromCanonical('Read', { file_path: 'a', offset: -1 }).name).toBe('Raw');
  });
  it('types slash commands as Command', () => {
    expect(toolFromCanonical('/release', { args: 'patch' })).toEqual({
      name: 'Command',
      command: '/release',
      args: 'patch',
    });
  });
  it('round-trips every typed tool through its canonical form', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['Read', { file_path: 'a', offset: 1, limit: 2 }],
      ['Write', { file_path: 'a', content: 'b' }],
      ['Edit', { file_path: 'a', old_string: 'b', new_string: 'c', replace_all: true }],
      ['MultiEdit', { file_path: 'a', edits: [{ old_string: 'b', new_string: 'c' }] }],
      ['Bash', { command: 'x', workdir: '/', description: 'd', run_in_background: false }],
    ];
    for (const [name, input] of cases) {
      const tool = toolFromCanonical(name, input as never);
      expect(tool.name).toBe(name);
      expect(toolToCanonical(tool)).toEqual({ name, input });
    }
  });
});

describe('uuidV5', () => {
  it('matches the RFC 9562 DNS example', () => {
    // RFC 9562 appendix: UUIDv5 of "www.example.com" in the DNS namespace.
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });
});

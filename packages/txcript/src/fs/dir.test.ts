import { join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPath } from './dir.ts';

describe('entryPath', () => {
  it('is path.join of a normalised folder and one entry name', () => {
    const dirs = [
      '/home/dev/.claude/projects/-home-dev-app',
      '/',
      '/tmp/box/agents/',
      '.',
      'rel/dir',
      '/a//b/../c',
    ];
    const names = ['s.jsonl', 'agent-1', '.hidden', 'profile.json'];
    for (const dir of dirs.map((d) => normalize(d)))
      for (const name of names) expect(entryPath(dir, name)).toBe(join(dir, name));
  });
});

import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryFile } from './memory-file.ts';
import { MemoryRefusal, memoryBytes } from './memory-store.ts';
import { memorySection } from './agent-memory.ts';
import { nearMatches } from './near-matches.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-memory-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a memory file', () => {
  it('keeps entries in order, 0600, replaced atomically (no temp file left)', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'agent');
    expect(await file.entries()).toEqual([]);
    await file.write('The user likes tea', 1);
    const second = await file.write('Reports go out on Fridays', 2);
    expect(second.added).toBe(true);
    expect((await stat(file.file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['memory.json']);
    // A second reader (a restarted box) reads what the first wrote.
    const again = new MemoryFile(file.file, 'agent');
    expect(await again.entries()).toEqual([
      { text: 'The user likes tea', createdAt: 1 },
      { text: 'Reports go out on Fridays', createdAt: 2 },
    ]);
    // The same text twice is one entry.
    expect((await file.write('The user likes tea', 3)).added).toBe(false);
    expect(await again.entries()).toHaveLength(2);
  });

  it('reads a file another writer changed (the user editing it by hand)', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'user');
    await file.write('one', 1);
    await writeFile(file.file, JSON.stringify({ entries: [{ text: 'edited by hand', createdAt: 5 }] }));
    expect((await file.entries()).map((entry) => entry.text)).toEqual(['edited by hand']);
  });

  it('lands every one of many writes made at once', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'user');
    await Promise.all(Array.from({ length: 20 }, (_, i) => file.write(`fact ${i}`, i)));
    const texts = (await new MemoryFile(file.file, 'user').entries()).map((entry) => entry.text);
    expect(texts.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `fact ${i}`).sort());
  });

  it('refuses a write past the cap, telling the model to condense, and keeps what it held', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'agent', 100);
    await file.write('x'.repeat(60), 1);
    const before = await readFile(file.file, 'utf8');
    const refused = file.write('y'.repeat(40), 2);
    await expect(refused).rejects.toBeInstanceOf(MemoryRefusal);
    await expect(refused).rejects.toThrow(
      /would hold 101 bytes, past its cap of 100.*Condense it first: forget/s,
    );
    expect(await readFile(file.file, 'utf8')).toBe(before);
    // Exactly at the cap fits (60 + newline + 39).
    await file.write('y'.repeat(39), 3);
    expect(memoryBytes(await file.entries())).toBe(100);
  });

  it('forgets by exact text; a miss lists the near matches and changes nothing', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'agent');
    await file.write('The user likes green tea', 1);
    await file.write('The user lives in Lyon', 2);
    await file.write('Deploys happen on Tuesdays', 3);
    const miss = file.forget('the user likes tea');
    await expect(miss).rejects.toThrow(MemoryRefusal);
    await expect(miss).rejects.toThrow(
      'Nothing forgotten: the agent memory has no entry that is exactly "the user likes tea". ' +
        'Near matches (forget takes the exact text; copy one):\n- "The user likes green tea"\n- "The user lives in Lyon"',
    );
    expect(await file.entries()).toHaveLength(3);
    await expect(file.forget('Nothing like any entry at all')).rejects.toThrow(
      /No entry is close to it \(3 entries/,
    );
    const done = await file.forget('The user likes green tea');
    expect(done.removed).toBe(1);
    expect((await new MemoryFile(file.file, 'agent').entries()).map((entry) => entry.text)).toEqual([
      'The user lives in Lyon',
      'Deploys happen on Tuesdays',
    ]);
  });

  it('reports a broken file with what to do, and never writes over it', async () => {
    const file = new MemoryFile(path.join(dir, 'memory.json'), 'user');
    await writeFile(file.file, '{"entries": [oops');
    await expect(file.entries()).rejects.toThrow(
      /memory\.json: the user memory is not valid JSON .*move it away/,
    );
    await expect(file.write('new', 1)).rejects.toThrow(/not valid JSON/);
    expect(await readFile(file.file, 'utf8')).toBe('{"entries": [oops');
    await writeFile(file.file, '{"entries": [{"txt": "x"}]}');
    await expect(file.entries()).rejects.toThrow(/at entries\.0\.text/);
  });
});

describe('near matches', () => {
  it('puts containing entries first, then shared words, and drops the unrelated', () => {
    expect(
      nearMatches('likes tea', ['Deploys on Tuesday', 'The user likes tea a lot', 'user likes coffee']),
    ).toEqual(['The user likes tea a lot', 'user likes coffee']);
    expect(nearMatches('zebra', ['one', 'two'])).toEqual([]);
  });
});

describe('the memory section', () => {
  it('lists both scopes with their fill, and asks to condense a scope past its cap', async () => {
    const agent = new MemoryFile(path.join(dir, 'agent.json'), 'agent', 20);
    const user = new MemoryFile(path.join(dir, 'user.json'), 'user', 100);
    await agent.write('first line\nsecond', 1);
    await writeFile(
      agent.file,
      JSON.stringify({
        entries: [
          { text: 'first line\nsecond', createdAt: 1 },
          { text: 'way past it', createdAt: 2 },
        ],
      }),
    );
    const section = await memorySection({ scope: (scope) => (scope === 'agent' ? agent : user) });
    expect(section).toContain(
      '## Agent memory (yours alone): 29 of 20 bytes\n- first line\n  second\n- way past it\n',
    );
    expect(section).toContain('past its cap of 20 bytes: condense it now');
    expect(section).toContain("## User memory (shared by all of the user's agents): 0 of 100 bytes\n(empty)");
    await writeFile(user.file, 'not json');
    expect(await memorySection({ scope: (scope) => (scope === 'agent' ? agent : user) })).toMatch(
      /## User memory \(shared by all of the user's agents\)\n\(unreadable: .*not valid JSON/,
    );
  });
});

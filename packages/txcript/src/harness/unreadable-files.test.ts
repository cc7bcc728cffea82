/**
 * Files txcript cannot use (issue 24 item 12): a file that failed is
 * remembered until its size or times change, and a line over the cap is
 * read past without being gathered or decoded. Real files in a temp folder:
 * a 2 GB sparse file (no newline in 2 GB, no disk used) among them.
 */
import { closeSync, mkdirSync, openSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexStore } from './codex/index.ts';
import { linesOfFile } from './jsonl-file.ts';
import { readJsonl } from './jsonl.ts';
import { forEachLatin1Line } from './line-skim.ts';
import { RACY_WINDOW_MS } from './summary-cache-file.ts';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-unreadable-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const MiB = 2 ** 20;

describe('a file that failed', () => {
  it('is reported from the cache, not read again, until its size or mtime changes', async () => {
    const day = join(home, 'codex', 'sessions', '2026', '01', '02');
    mkdirSync(day, { recursive: true });
    const file = join(day, 'rollout-2026-01-02T10-00-00-5d1f0a7e-3b2c-4d9e-8f1a-2c3b4d5e6f70.jsonl');
    writeFileSync(file, '{"type":"event_msg","payload":{"type":"agent_message","message":"no meta"}}\n');
    const env = { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), CODEX_HOME: join(home, 'codex') };
    let clock = Date.now() + 10 * RACY_WINDOW_MS;
    const store = () => codexStore(env, { now: () => clock });

    const first = await store().discover();
    expect(first.sessions).toEqual([]);
    expect(first.warnings).toEqual([
      {
        source: file,
        message: expect.stringMatching(/^no session_meta line with an id; not a Codex session/) as string,
      },
    ]);
    expect(first.warnings[0]!.message).not.toContain('not read again');

    const second = await store().discover();
    expect(second.warnings).toEqual([
      { source: file, message: `${first.warnings[0]!.message} (not read again until the file changes)` },
    ]);

    // A new mtime: read again (and found to be a session now).
    const meta = `{"timestamp":"2026-01-02T10:00:00.000Z","type":"session_meta","payload":{"id":"5d1f0a7e-3b2c-4d9e-8f1a-2c3b4d5e6f70","cwd":"/w"}}\n`;
    writeFileSync(file, meta);
    utimesSync(file, new Date(), new Date(Date.now() + 60_000));
    clock = Date.now() + 100 * RACY_WINDOW_MS;
    const third = await store().discover();
    expect(third.warnings).toEqual([]);
    expect(third.sessions.map((s) => s.id)).toEqual(['5d1f0a7e-3b2c-4d9e-8f1a-2c3b4d5e6f70']);
  });
});

/** A file of `lines`, each `[bytes, text]`: a line of `bytes` filler bytes, or the text. */
function writeLines(file: string, lines: Array<string | number>): void {
  const fd = openSync(file, 'w');
  const filler = Buffer.alloc(MiB, 'x');
  try {
    for (const line of lines) {
      if (typeof line === 'string') writeSync(fd, `${line}\n`);
      else {
        for (let left = line; left > 0; left -= filler.length)
          writeSync(fd, filler, 0, Math.min(left, filler.length));
        writeSync(fd, '\n');
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe('a line over the cap', () => {
  const record = '{"type":"note","text":"kept"}';

  it('is skipped by the listing skim, which is told its number and size, and the lines after it are read', () => {
    const file = join(home, 'skim.jsonl');
    writeLines(file, [record, 9 * MiB + 5, record, 3 * MiB]);
    const seen: string[] = [];
    const long: Array<[number, number, number]> = [];
    forEachLatin1Line(
      file,
      (l) => void seen.push(l),
      (...a) => void long.push(a),
      2 * MiB,
    );
    expect(seen).toEqual([record, record]);
    expect(long).toEqual([
      [2, 9 * MiB + 5, 2 * MiB],
      [4, 3 * MiB, 2 * MiB],
    ]);
  });

  it('is skipped by the streamed reader with a warning naming the line, and nothing else is lost', () => {
    const file = join(home, 'stream.jsonl');
    writeLines(file, [record, 5 * MiB, 'é'.repeat(10), record]);
    const kinds: string[] = [];
    const warnings = readJsonl(
      linesOfFile(file, 64 * 1024, MiB),
      file,
      (value) => ({ known: true, fields: { json: value } }),
      (line) => void kinds.push(`${line.kind}:${'line' in line ? line.line : '?'}`),
    );
    expect(kinds).toEqual(['record:1', 'malformed:3', 'record:4']);
    expect(warnings).toEqual([
      {
        source: file,
        line: 2,
        message:
          'line of 5.0 MB skipped: over the 1.0 MB a line may have (TXCRIPT_MAX_LINE_MB raises the cap)',
      },
      { source: file, line: 3, message: expect.stringMatching(/^malformed JSON/) as string },
    ]);
  });

  it('never gathers more than the cap in memory, for a line of 2 GB', () => {
    const file = join(home, 'sparse.jsonl');
    writeFileSync(file, '');
    truncateSync(file, 2 * 1024 * MiB);
    const before = process.memoryUsage().arrayBuffers;
    let peak = before;
    const long: number[] = [];
    forEachLatin1Line(
      file,
      () => {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      },
      (_line, bytes) => {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers);
        long.push(bytes);
      },
      4 * MiB,
    );
    expect(long).toEqual([2 * 1024 * MiB]);
    // The shared buffer grows to the cap at most (64 MiB of slack for anything else the process holds).
    expect(peak - before).toBeLessThan(64 * MiB);
  });
});

/**
 * `txcript export` of a whole session, and the listing that finds it, run in
 * memory that does not grow with the session (issue 24): the real process,
 * with a V8 heap far too small to hold the session, lists and exports 150,000
 * records of a Claude Code session. A summary at the end, naming the last
 * line as its leaf, titles it: both need a second look for that line.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runProcess } from '../../test/run-process.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));
const SID = '6a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const RECORDS = 150_000;
const TITLE = 'Counting to many';
const SMALL_HEAP = '--max-old-space-size=32 --max-semi-space-size=4';
let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-export-memory-'));
  const project = join(home, '.claude', 'projects', '-w');
  mkdirSync(project, { recursive: true });
  const fd = openSync(join(project, `${SID}.jsonl`), 'w');
  let batch: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const user = i % 2 === 0;
    batch.push(
      JSON.stringify({
        parentUuid: i === 0 ? null : `u${i - 1}`,
        isSidechain: false,
        sessionId: SID,
        cwd: '/w',
        type: user ? 'user' : 'assistant',
        message: user
          ? { role: 'user', content: `hi ${i}` }
          : { role: 'assistant', content: [{ type: 'text', text: `ok ${i}` }] },
        uuid: `u${i}`,
        timestamp: new Date(1.7e12 + i * 1000).toISOString(),
      }),
    );
    if (i === RECORDS - 1) batch.push(JSON.stringify({ type: 'summary', summary: TITLE, leafUuid: `u${i}` }));
    if (batch.length >= 10_000 || i === RECORDS - 1) {
      writeSync(fd, `${batch.join('\n')}\n`);
      batch = [];
    }
  }
  closeSync(fd); // about 36 MB: held as Common it takes several times the 32 MB heap below
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** stderr without the progress a scan of over a second shows. */
const quiet = (stderr: string): string => stderr.replace(/^txcript: scanning sessions .*\n/gm, '');

const txcript = (args: string[]) =>
  runProcess(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TZ: 'UTC',
      TXCRIPT_NO_CACHE: '1',
      NODE_OPTIONS: SMALL_HEAP,
    },
  });

it('lists a 150,000-record session with a 32 MB heap', { timeout: 120_000 }, async () => {
  const run = await txcript(['list', '--from', 'claude_code', '--json']);
  expect(quiet(run.stderr)).toBe('');
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual([
    expect.objectContaining({
      id: SID,
      title: TITLE,
      messages: RECORDS,
      last_activity: new Date(1.7e12 + (RECORDS - 1) * 1000).toISOString(),
    }),
  ]);
});

it.each([
  ['by its exact id in one harness', ['--from', 'claude_code']],
  ['found by listing every harness', []],
])('exports a 150,000-record session with a 32 MB heap, %s', { timeout: 120_000 }, async (_, from) => {
  const out = join(home, 'export.json');
  const run = await txcript(['export', SID, ...from, '--out', out]);
  expect(quiet(run.stderr)).toBe('');
  expect(run.code).toBe(0);
  const doc = JSON.parse(await readFile(out, 'utf8')) as { id: string; title: string; messages: unknown[] };
  expect(doc.id).toBe(SID);
  expect(doc.title).toBe(TITLE);
  expect(doc.messages).toHaveLength(RECORDS);
  expect(doc.messages.at(-1)).toMatchObject({
    role: 'assistant',
    content: [{ type: 'text', text: `ok ${RECORDS - 1}` }],
  });
});

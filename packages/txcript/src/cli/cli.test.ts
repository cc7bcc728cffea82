/**
 * The CLI's behaviour, run in-process against a fake harness whose store
 * serves fixed transcripts (the real stores are exercised by the subprocess
 * tests). Streams are captured; nothing touches the user's HOME.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import { simple } from '../harness/simple/index.ts';
import type { DiscoverOptions, Harness, SessionSummary, Store } from '../harness/types.ts';
import type { Transcript } from '../model/common.ts';
import { run } from './program.ts';

const T = '2026-09-10T12:00:00Z';

const sessions: Record<string, Transcript> = {
  a1b2c3: {
    // No title of its own: view and export take the store's list title.
    meta: { id: 'a1b2c3', timestamp: T },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'fix it' }], timestamp: T },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'u1', tool: { name: 'Bash', command: 'npm test' } }],
        timestamp: '2026-09-10T12:00:01Z',
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'u1', content: '42 passed' }],
        timestamp: '2026-09-10T12:00:02Z',
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }], timestamp: '2026-09-10T12:00:03Z' },
    ],
  },
  a1ffff: {
    meta: { id: 'a1ffff', timestamp: T },
    messages: [{ role: 'user', content: [{ type: 'text', text: 'sub task' }], timestamp: T }],
  },
};

const summaries: SessionSummary[] = [
  {
    id: 'a1b2c3',
    harness: 'fake',
    title: 'Pagination fix',
    messageCount: 4,
    lastActivity: '2026-09-10T12:00:03Z',
    locator: '/fake/a1b2c3',
  },
  {
    id: 'a1ffff',
    harness: 'fake',
    messageCount: 1,
    lastActivity: '2026-09-10T13:00:00Z',
    locator: '/fake/a1ffff',
    parentId: 'a1b2c3',
  },
];

function fakeStore(progress: Array<[number, number]> = []): Store {
  return {
    discover(options?: DiscoverOptions) {
      for (const [d, t] of progress) options?.onProgress?.(d, t);
      return Promise.resolve({
        sessions: summaries,
        warnings: [{ source: '/fake/bad.jsonl', line: 3, message: 'bad\nline' }],
      });
    },
    load(id: string) {
      const transcript = sessions[id];
      if (transcript === undefined) return Promise.reject(new Error(`no session ${id}`));
      return Promise.resolve({ transcript, source: `/fake/${id}`, warnings: [] });
    },
  };
}

const fake: Harness = {
  id: 'fake',
  aliases: ['fk'],
  text: simple.text,
  codec: simple.codec,
  store: () => fakeStore(),
};
const broken: Harness = {
  ...fake,
  id: 'broken',
  aliases: [],
  store: () => ({
    discover: () => Promise.reject(new Error('disk on fire')),
    load: () => Promise.reject(new Error('x')),
  }),
};

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(
  args: string[],
  options: {
    harnesses?: Harness[];
    stdin?: string;
    env?: Record<string, string>;
    tty?: boolean;
    columns?: number;
  } = {},
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: {
      write: (s: string) => (stdout += s),
      isTTY: options.tty ?? false,
      ...(options.columns !== undefined ? { columns: options.columns } : {}),
    },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    env: { TZ: 'UTC', ...options.env },
    now: () => new Date('2026-09-10T14:00:00Z'),
    harnesses: options.harnesses ?? [fake, simple],
  });
  return { code, stdout, stderr };
}

describe('txcript list', () => {
  it('prints a table with subagents under their parent, warnings on stderr naming the file', async () => {
    const r = await cli(['list']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+HARNESS\s+MSGS\s+LAST ACTIVITY\s+TITLE$/);
    expect(lines[1]).toMatch(/^a1b2c3\s+fake\s+4\s+2026-09-10 12:00\s+Pagination fix$/);
    expect(lines[2]).toMatch(/^└ a1ffff\s+fake\s+1\s+2026-09-10 13:00\s+\(untitled\)$/);
    expect(r.stderr).toBe('txcript: warning: bad line (/fake/bad.jsonl:3)\n');
  });

  it('shows a listing warning once a day when it has a home to remember it in; --quiet shows none', async () => {
    const home = await mkdtemp(join(tmpdir(), 'txcript-warned-'));
    try {
      const env = { HOME: home };
      const warning = 'txcript: warning: bad line (/fake/bad.jsonl:3)\n';
      expect((await cli(['list'], { env })).stderr).toBe(warning);
      expect((await cli(['list'], { env })).stderr).toBe('');
      for (const args of [
        ['--quiet', 'list'],
        ['list', '-q'],
      ])
        expect((await cli(args, { env: { HOME: join(home, 'other') } })).stderr).toBe('');
      // What the user named is always warned about: convert's input.
      const stdin =
        '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-09-10T12:00:00Z","message":{"role":"user","content":"hi"}}\n{"type":"user",\n';
      const convert = ['convert', '-', '--from', 'claude_code', '--to', 'simple'];
      const first = await cli(convert, { env, stdin, harnesses: [claudeCode, simple] });
      const again = await cli(convert, { env, stdin, harnesses: [claudeCode, simple] });
      expect(first.stderr).toContain('warning');
      expect(again.stderr).toBe(first.stderr);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it('fits a terminal: ids cut to their shortest unique prefix, titles to the rest of the line', async () => {
    const r = await cli(['list'], { tty: true, columns: 60, env: { NO_COLOR: '1' } });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
    // a1b2c3 and a1ffff share "a1": both short ids are whole here (under 8 characters).
    expect(lines[1]).toMatch(/^a1b2c3\s+fake\s+4\s+2026-09-10 12:00\s+Pagination fix$/);
    const long = (id: string): SessionSummary => ({ ...summaries[0]!, id, parentId: undefined });
    const many: Harness = {
      ...fake,
      store: () => ({
        discover: () =>
          Promise.resolve({
            sessions: [
              long('0199aa11-2233-7445-8566-778899aabbcc'),
              long('0199aa11-9999-7445-8566-778899aabbcc'),
            ],
            warnings: [],
          }),
        load: () => Promise.reject(new Error('x')),
      }),
    };
    const fitted = await cli(['list'], {
      tty: true,
      columns: 70,
      harnesses: [many, simple],
      env: { NO_COLOR: '1' },
    });
    expect(fitted.stdout).toContain('0199aa11-2 ');
    expect(fitted.stdout).toContain('0199aa11-9 ');
    const piped = await cli(['list'], { harnesses: [many, simple] });
    expect(piped.stdout).toContain('0199aa11-2233-7445-8566-778899aabbcc');
  });

  it('prints the stable JSON array', async () => {
    const r = await cli(['list', '--json', '--from', 'fk']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      {
        id: 'a1b2c3',
        harness: 'fake',
        title: 'Pagination fix',
        messages: 4,
        last_activity: '2026-09-10T12:00:03Z',
        parent: null,
        locator: '/fake/a1b2c3',
      },
      {
        id: 'a1ffff',
        harness: 'fake',
        title: null,
        messages: 1,
        last_activity: '2026-09-10T13:00:00Z',
        parent: 'a1b2c3',
        locator: '/fake/a1ffff',
      },
    ]);
  });

  it('filters by relative time and limits', async () => {
    expect(JSON.parse((await cli(['list', '--json', '--since', '59m'])).stdout)).toEqual([]);
    const r = await cli(['list', '--json', '--since', '90m', '-n', '1']);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(['a1ffff']);
    const empty = await cli(['list', '--until', '2000-01-01']);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain('txcript: no sessions found (2 outside the time bounds)');
  });

  it('keeps going when one store fails, with a warning', async () => {
    const r = await cli(['list', '--json'], { harnesses: [broken, fake] });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(2);
    expect(r.stderr).toContain('txcript: warning: scan failed: disk on fire (broken)');
  });

  it('fails when the one store asked for fails', async () => {
    const r = await cli(['list', '--from', 'broken'], { harnesses: [broken, fake] });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('txcript: could not scan broken sessions: disk on fire\n');
  });

  it('rejects usage errors with exit 2', async () => {
    const unknown = await cli(['list', '--from', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('txcript: unknown harness "nope" — use one of: fake, simple\n');
    const storeless = await cli(['list', '--from', 'simple']);
    expect(storeless.code).toBe(2);
    expect(storeless.stderr).toContain('harness simple keeps no sessions of its own (--from simple)');
    expect((await cli(['list', '-n', '0'])).code).toBe(2);
    expect((await cli(['list', '--since', 'soon'])).code).toBe(2);
    const option = await cli(['list', '--jsn']);
    expect(option.code).toBe(2);
    expect(option.stderr).toBe(
      'txcript: unknown option \'--jsn\' (Did you mean --json?) — see "txcript list --help"\n',
    );
  });

  it('shows progress on stderr once the delay has passed, never on stdout', async () => {
    const slow: Harness = {
      ...fake,
      store: () =>
        fakeStore([
          [1, 2],
          [2, 2],
        ]),
    };
    const r = await cli(['list', '--json'], { harnesses: [slow], env: { TXCRIPT_PROGRESS_DELAY_MS: '0' } });
    expect(r.stderr).toContain('txcript: scanning sessions 1/2\n');
    expect(JSON.parse(r.stdout)).toHaveLength(2);
    const quiet = await cli(['list', '--json'], { harnesses: [slow] });
    expect(quiet.stderr).not.toContain('scanning');
  });
});

describe('txcript view', () => {
  it('renders a session found by title, with a range', async () => {
    const r = await cli(['view', 'Pagination fix#2-3']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('Pagination fix');
    expect(r.stdout).toContain('showing #2-3 of 4');
    expect(r.stdout).toContain('── #2 · assistant · 2026-09-10T12:00:01Z ──\n→ Bash: npm test\n');
    expect(r.stdout).toContain('← 42 passed');
    expect(r.stdout).not.toContain('#1 ·');
  });

  it('matches a unique id prefix', async () => {
    const r = await cli(['view', 'a1f']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sub task');
    expect(r.stdout.split('\n')[0]).toBe('a1ffff');
  });

  it('refuses an ambiguous prefix with exit 2, listing candidates', async () => {
    const r = await cli(['view', 'a1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'txcript: "a1" is a prefix of 2 sessions — give more of the id, or --from <harness>\n',
    );
    expect(r.stderr).toContain('  a1b2c3  fake  "Pagination fix"\n  a1ffff  fake  (untitled)\n');
  });

  it('reports an unknown session with exit 1 and points at list', async () => {
    const r = await cli(['view', 'zzz']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'txcript: warning: bad line (/fake/bad.jsonl:3)\n' +
        'txcript: no session matches "zzz" (2 sessions searched) — run "txcript list" to see session ids and titles\n',
    );
  });

  it('refuses a range that splits a tool call from its result, exit 2', async () => {
    const r = await cli(['view', 'a1b2c3#3-4']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'txcript: range #3-4 separates the tool call in #2 from its result in #3 — use #4 (narrower) or #2-4 (wider) to keep tool calls with their results\n',
    );
    const past = await cli(['view', 'a1b2c3#9']);
    expect(past.code).toBe(2);
    expect(past.stderr).toContain('the session has 4 messages (#1-4)');
  });

  it('colours a terminal unless NO_COLOR is set', async () => {
    expect((await cli(['view', 'a1b2c3'], { tty: true })).stdout).toContain('\u001b[');
    expect((await cli(['view', 'a1b2c3'], { tty: true, env: { NO_COLOR: '1' } })).stdout).not.toContain(
      '\u001b[',
    );
  });
});

describe('txcript export', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'txcript-export-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the Simple document of a range', async () => {
    const r = await cli(['export', 'a1b2c3#-1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      id: 'a1b2c3',
      timestamp: T,
      title: 'Pagination fix',
      messages: [
        { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }], timestamp: '2026-09-10T12:00:03Z' },
      ],
    });
    expect(r.stdout.endsWith('}\n')).toBe(true);
  });

  it('writes --out atomically, leaving no temp file', async () => {
    const out = join(dir, 'session.json');
    const r = await cli(['export', 'a1b2c3', '--out', out]);
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    const text = await readFile(out, 'utf8');
    expect((JSON.parse(text) as { messages: unknown[] }).messages).toHaveLength(4);
    expect(await readdir(dir)).toEqual(['session.json']);
  });

  it('fails clearly when the folder does not exist', async () => {
    const r = await cli(['export', 'a1b2c3', '--out', join(dir, 'missing', 'x.json')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /txcript: could not write the export: ENOENT.* — check that the folder exists and is writable/,
    );
  });
});

describe('txcript convert', () => {
  it('converts stdin through Common, stamping a document without a time', async () => {
    const r = await cli(['convert', '-', '--from', 'simple', '--to', 'simple'], {
      stdin: '{"id":"x","messages":[{"role":"User","content":"hi"},{"role":"robot","content":"?"}]}',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      `${JSON.stringify(
        {
          id: 'x',
          timestamp: '2026-09-10T14:00:00Z',
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: '2026-09-10T14:00:00Z' },
          ],
        },
        null,
        2,
      )}\n`,
    );
    expect(r.stderr).toContain('txcript: warning: messages[1].role: unknown role');
    expect(r.stderr).toContain('(<stdin>)');
  });

  it('reports a document that is not JSON with its line, exit 1', async () => {
    const r = await cli(['convert', '-', '--from', 'simple', '--to', 'simple'], {
      stdin: '{\n  "messages": [,]\n}',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'txcript: not JSON: unexpected "," (<stdin>:2:16) — fix the document, or check --from simple\n',
    );
  });

  describe('a wrong --from', () => {
    const claudeLines =
      [
        {
          type: 'user',
          uuid: 'u1',
          parentUuid: null,
          sessionId: 's1',
          timestamp: T,
          cwd: '/w',
          message: { role: 'user', content: 'hello' },
        },
        {
          type: 'assistant',
          uuid: 'a1',
          parentUuid: 'u1',
          sessionId: 's1',
          timestamp: T,
          cwd: '/w',
          message: { role: 'assistant', model: 'm', content: [{ type: 'text', text: 'hi' }] },
        },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
    const harnesses = [claudeCode, codex, simple];

    it('exits 1 with one line naming what the input looks like, for a line format read as another', async () => {
      const r = await cli(['convert', '-', '--from', 'codex', '--to', 'simple'], {
        harnesses,
        stdin: claudeLines,
      });
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'txcript: no codex messages in the input; it looks like claude_code text (<stdin>) — use --from claude_code\n',
      });
    });

    it('says the same when the named format cannot parse the input at all', async () => {
      const r = await cli(['convert', '-', '--from', 'simple', '--to', 'codex'], {
        harnesses,
        stdin: claudeLines,
      });
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'txcript: not simple text; it looks like claude_code text (<stdin>) — use --from claude_code\n',
      });
    });

    it('says so when no harness reads the input, and converts a blank one as empty', async () => {
      const r = await cli(['convert', '-', '--from', 'codex', '--to', 'simple'], {
        harnesses,
        stdin: 'hello world\n',
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        'txcript: no codex messages in the input, and no other harness reads any from it (<stdin>) — check that it is a session file and that --from names its harness\n',
      );
      const blank = await cli(['convert', '-', '--from', 'codex', '--to', 'simple'], {
        harnesses,
        stdin: '\n',
      });
      expect(blank.code).toBe(0);
    });

    it('still converts the input with the right --from', async () => {
      const r = await cli(['convert', '-', '--from', 'claude_code', '--to', 'simple'], {
        harnesses,
        stdin: claudeLines,
      });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ messages: [{ role: 'user' }, { role: 'assistant' }] });
    });
  });

  it('reports a missing file, exit 1', async () => {
    const r = await cli(['convert', '/nonexistent/run.json', '--from', 'simple', '--to', 'simple']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^txcript: could not read the input: ENOENT.*\(\/nonexistent\/run\.json\) — /);
  });

  it('needs --from and --to', async () => {
    const r = await cli(['convert', '-', '--to', 'simple']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("required option '--from <harness>' not specified");
  });
});

describe('txcript itself', () => {
  it('prints help with exit 0, and help for every command', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: txcript');
    for (const command of ['list', 'view', 'export', 'convert']) {
      const h = await cli([command, '--help']);
      expect(h.code).toBe(0);
      expect(h.stdout).toContain(`Usage: txcript ${command}`);
    }
    expect((await cli(['view', '--help'])).stdout).toContain('<id>#-10    the last 10 messages');
  });

  it('prints its version, the one in its package.json, with exit 0', async () => {
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      expect(await cli([flag])).toEqual({ code: 0, stdout: `${manifest.version}\n`, stderr: '' });
    }
  });

  it('points a usage error at the help of the mistyped command', async () => {
    const r = await cli(['view']);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'txcript: missing required argument \'session\' — see "txcript view --help"\n',
    });
  });

  it('treats no command and an unknown command as usage errors', async () => {
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage: txcript');
    const unknown = await cli(['lst']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("txcript: unknown command 'lst' (Did you mean list?)");
  });
});

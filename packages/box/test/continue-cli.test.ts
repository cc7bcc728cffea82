/**
 * `txcript continue` as a real process: what the shell sees (exit codes,
 * stdout, stderr) and what lands on disk, with temp store roots, a real box
 * for grok_bot, and a tiny recording script standing in for `claude` /
 * `codex` through the TXCRIPT_*_RESUME templates. Each spawn costs about a
 * second, so only the process boundary is tested here; the mint's and the
 * codecs' rules have their own suites (mint.test.ts, continue-cross-harness).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commonToSimple, findHarness, renderSimple } from '@sendbox/txcript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProcess, type Outcome } from '../../txcript/test/run-process.ts';
import { referenceConversation, startMintBox, type MintBox } from './continue-support.ts';

const txcriptBin = fileURLToPath(new URL('../../../node_modules/.bin/txcript', import.meta.url));

let mb: MintBox;
let work: string;
let doc: string;
let project: string;
let recorder: string;

function txcript(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<Outcome> {
  return runProcess(txcriptBin, args, {
    env: { PATH: process.env.PATH ?? '', HOME: mb.home, TZ: 'UTC', NO_COLOR: '1', ...env },
    cwd: work,
    stdin,
  });
}

/** The session id `continue` printed. */
function sessionIdOf(stdout: string): string {
  const id = /^ {2}(?:session|agent): +(\S+)/m.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`no session id in:\n${stdout}`);
  return id;
}

/** Session ids a harness's store finds under `env` (in-process: one `list` spawn is enough for this suite). */
async function storedIds(harness: string, env: Record<string, string>): Promise<string[]> {
  const found = await findHarness(harness).store!({ HOME: mb.home, ...env }).discover();
  return found.sessions.map((s) => s.id);
}

async function sha256(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

beforeAll(async () => {
  mb = await startMintBox();
  work = await mkdtemp(path.join(os.tmpdir(), 'txcript-continue-cli-'));
  project = path.join(work, 'project');
  await mkdir(project);
  const reference = referenceConversation();
  doc = path.join(work, 'run.json');
  await writeFile(
    doc,
    renderSimple(commonToSimple({ ...reference, meta: { ...reference.meta, cwd: project } })),
  );
  // Stands in for `codex` / `claude`: records its argv and cwd, exits 7.
  recorder = path.join(work, 'record.mjs');
  await writeFile(
    recorder,
    [
      "import { writeFileSync } from 'node:fs';",
      'writeFileSync(process.env.RECORD_TO, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd() }));',
      'process.exit(7);',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await mb?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('txcript continue (process)', () => {
  it('--with claude_code --no-resume writes a session that "list --from claude_code" shows', async () => {
    const env = { CLAUDE_CONFIG_DIR: path.join(work, 'claude-a') };
    const before = await sha256(doc);
    const r = await txcript(['continue', doc, '--with', 'claude_code', '--no-resume'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = sessionIdOf(r.stdout);
    expect(r.stdout).toContain(`continued ${doc} (9 messages) into claude_code as a new session`);
    const file = path.join(
      work,
      'claude-a',
      'projects',
      project.replace(/[^A-Za-z0-9]/g, '-'),
      `${id}.jsonl`,
    );
    expect(r.stdout).toContain(`  file:    ${file}`);
    expect(existsSync(file)).toBe(true);
    expect(await sha256(doc)).toBe(before);

    const listed = await txcript(['list', '--from', 'claude_code', '--json'], env);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; harness: string; locator: string }>;
    expect(rows).toEqual([expect.objectContaining({ id, harness: 'claude_code', locator: file })]);

    // An id source: that session (a range of it) continues into codex; the source file is untouched.
    const source = await sha256(file);
    const again = await txcript(['continue', `${id.slice(0, 8)}#1-3`, '--with', 'codex', '--no-resume'], {
      ...env,
      CODEX_HOME: path.join(work, 'codex-a'),
    });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`continued claude_code session ${id} (3 messages) into codex`);
    expect(sessionIdOf(again.stdout)).not.toBe(id);
    expect(await sha256(file)).toBe(source);
  });

  it('--with codex launches the resume command with the new id in the session folder, exiting with its code', async () => {
    const record = path.join(work, 'launch.json');
    const r = await txcript(['continue', doc, '--with', 'codex'], {
      CODEX_HOME: path.join(work, 'codex-b'),
      TXCRIPT_CODEX_RESUME: `node ${recorder} resume {id}`,
      RECORD_TO: record,
    });
    expect(r.code).toBe(7);
    const id = sessionIdOf(r.stdout);
    const launched = JSON.parse(await readFile(record, 'utf8')) as { argv: string[]; cwd: string };
    expect(launched).toEqual({ argv: ['resume', id], cwd: project });
    expect(r.stderr).toBe(`txcript: launching node ${recorder} resume ${id} (in ${project})\n`);
    const day = path.join(work, 'codex-b', 'sessions', '2026', '09', '10');
    expect((await readdir(day)).filter((f) => f.endsWith(`${id}.jsonl`))).toHaveLength(1);
  });

  it('a missing resume program: exit 1, the saved session id and the command to run by hand', async () => {
    const r = await txcript(['continue', doc, '--with', 'claude_code'], {
      CLAUDE_CONFIG_DIR: path.join(work, 'claude-c'),
      TXCRIPT_CLAUDE_CODE_RESUME: 'no-such-claude-binary --resume {id}',
    });
    expect(r.code).toBe(1);
    const id = sessionIdOf(r.stdout);
    const lines = r.stderr.trim().split('\n');
    expect(lines[1]).toBe(
      `txcript: no-such-claude-binary is not installed or not on PATH, so the session was not opened ` +
        `(session ${id} saved to ${path.join(work, 'claude-c', 'projects', project.replace(/[^A-Za-z0-9]/g, '-'), `${id}.jsonl`)}) ` +
        `— install it, then run: cd ${project} && no-such-claude-binary --resume ${id}`,
    );
    expect(await storedIds('claude_code', { CLAUDE_CONFIG_DIR: path.join(work, 'claude-c') })).toEqual([id]);
  });

  it('--with simple is refused with exit 2 and points at export', async () => {
    const r = await txcript(['continue', doc, '--with', 'simple']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^txcript: a Simple document has no managed location .*txcript export .*\(--with simple\)\n$/,
    );
  });

  it('reads a Simple document from stdin (-) and --out lays it out as a CODEX_HOME', async () => {
    const out = path.join(work, 'exported-codex');
    const r = await txcript(
      ['continue', '-', '--with', 'codex', '--out', out],
      {},
      await readFile(doc, 'utf8'),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = sessionIdOf(r.stdout);
    expect(r.stdout).toContain(`  use it:  CODEX_HOME=${out}`);
    expect(await storedIds('codex', { CODEX_HOME: out })).toEqual([id]);
  });

  it('--with grok_bot mints an agent in the live box and prints its name and entry count', async () => {
    const before = await mb.rosterIds();
    const r = await txcript(
      ['continue', doc, '--with', 'grok_bot', '--metadata', 'name=Relay bot', '--metadata', '{"future":1}'],
      mb.env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = sessionIdOf(r.stdout);
    expect(r.stdout).toContain(`  agent:   ${id}  "Relay bot"`);
    expect(r.stdout).toContain(`  entries: 7 ledger entries in ${path.join(mb.agentsDir, id, 'store.db')}`);
    expect(await mb.rosterIds()).toEqual([...before, id].sort());

    // --out: a JSONL-only export in the agent-transcripts layout, no box involved.
    const out = path.join(work, 'exported-grok');
    const exported = await txcript(['continue', doc, '--with', 'grok_bot', '--out', out], mb.env);
    expect(exported.code).toBe(0);
    const newId = sessionIdOf(exported.stdout);
    expect(existsSync(path.join(out, newId, `${newId}.jsonl`))).toBe(true);
    expect(await mb.rosterIds()).toEqual([...before, id].sort());
  });

  it('a Claude Code session continued into the box is told where it began, and its tools carry box names', async () => {
    const env = { ...mb.env, CLAUDE_CONFIG_DIR: path.join(work, 'claude-origin') };
    const saved = await txcript(['continue', doc, '--with', 'claude_code', '--no-resume'], env);
    expect(saved.code).toBe(0);
    const claudeId = sessionIdOf(saved.stdout);
    const r = await txcript(['continue', claudeId, '--from', 'claude_code', '--with', 'grok_bot'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = sessionIdOf(r.stdout);
    const profile = JSON.parse(await readFile(path.join(mb.agentsDir, id, 'profile.json'), 'utf8')) as {
      description: string;
    };
    expect(profile.description).toMatch(/began in Claude Code in the folder .+ on \d{4}-\d{2}-\d{2}/);
    const jsonl = await readFile(path.join(mb.transcriptsDir, id, `${id}.jsonl`), 'utf8');
    const names = [...jsonl.matchAll(/"type":"tool_use","name":"([^"]+)"/g)].map((m) => m[1]);
    // The reference conversation's Bash, Edit and web_search calls.
    expect(new Set(names)).toEqual(new Set(['shell', 'edit', 'web_search']));
  });

  it('a missing Grok Bot layout fails cleanly (exit 1) and suggests --out', async () => {
    const r = await txcript(['continue', doc, '--with', 'grok_bot']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/agents folder .* is missing or not writable.*--out DIR/);
  });
});

/**
 * Test material for a harness's generated fixture home: the checks every
 * harness with a store goes through, run through the CLI as a user would
 * (list, view, export to Simple, search, convert to and from Simple, and
 * continue into the harness), against a home folder of files the test
 * generated in the harness's own shapes.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Transcript } from '../model/common.ts';
import { runCli } from '../../test/run-cli.ts';
import { blockSignature } from './claude-code/conversation.fixture.ts';
import { findHarness } from './registry.ts';
import { simple } from './simple/index.ts';

export interface HomeSession {
  id: string;
  title: string;
  /** A word only this session holds (non-ASCII is welcome): search must find it. */
  word: string;
  /** Text that is in the native files but not in the conversation (an abandoned branch), or undefined. */
  hidden?: string;
}

export interface HomeCase {
  harness: string;
  /** The environment that points the harness (and txcript's cache) at the fixture home. */
  env: NodeJS.ProcessEnv;
  sessions: HomeSession[];
  /** A piece of the path of the malformed file or record the listing (or, `malformedOn: 'view'`, viewing the first session) must warn about. */
  malformed: string;
  malformedOn?: 'list' | 'view';
  /** false when the harness's native text is not the whole session (Grok CLI: the model log alone), so `convert` cannot keep every block. */
  convertKeepsAll?: boolean;
  /** A scratch folder for exports. */
  scratch: string;
  /** Continue-into is checked when the harness can be written (`--out` into this env variable's folder). */
  continueInto?: {
    outEnv: (dir: string) => NodeJS.ProcessEnv;
    /** The continued session read back from the file written (default: the store under outEnv, by id). */
    reread?: (file: string, id: string) => Promise<Transcript>;
  };
}

/** The Common transcript `txcript export` gives for a session. */
export async function exported(c: HomeCase, id: string): Promise<Transcript> {
  const r = await runCli(['export', id, '--from', c.harness], { env: c.env });
  expect(r.code, r.stderr).toBe(0);
  return simple.codec.toCommon(simple.text.parse(r.stdout).records, { sessionId: id });
}

/** Runs every check of a fixture home (see the module comment). */
export async function checkHome(c: HomeCase): Promise<void> {
  const harness = findHarness(c.harness);
  // list: every session with its title; the malformed file or record is a warning naming it, not an end.
  const list = await runCli(['list', '--from', c.harness, '--json', '--no-cache'], { env: c.env });
  expect(list.code, list.stderr).toBe(0);
  const listed = JSON.parse(list.stdout) as {
    id: string;
    title?: string;
    harness: string;
    messages?: number;
  }[];
  for (const s of c.sessions)
    expect(listed).toContainEqual(expect.objectContaining({ id: s.id, title: s.title, harness: c.harness }));
  if (c.malformedOn !== 'view') expect(list.stderr).toContain(c.malformed);

  for (const s of c.sessions) {
    // view
    const view = await runCli(['view', s.id, '--from', c.harness], { env: { ...c.env, NO_COLOR: '1' } });
    expect(view.code, view.stderr).toBe(0);
    expect(view.stdout).toContain(s.word);
    if (c.malformedOn === 'view' && s === c.sessions[0]) expect(view.stderr).toContain(c.malformed);
    if (s.hidden !== undefined) expect(view.stdout).not.toContain(s.hidden);

    // export to Simple, and back: Simple -> native -> Common keeps every block
    const common = await exported(c, s.id);
    expect(common.meta.title).toBe(s.title);
    // list's count is the number of messages view numbers (#1 … #N)
    expect(listed.find((l) => l.id === s.id)?.messages).toBe(common.messages.length);
    expect(view.stdout).toContain(`── #${common.messages.length} ·`);
    expect(view.stdout).not.toContain(`── #${common.messages.length + 1} ·`);
    const simpleFile = join(c.scratch, `${s.id}.simple.json`);
    const out = await runCli(['export', s.id, '--from', c.harness, '--out', simpleFile], { env: c.env });
    expect(out.code, out.stderr).toBe(0);
    const converted = await runCli(['convert', simpleFile, '--from', 'simple', '--to', c.harness], {
      env: c.env,
    });
    expect(converted.code, converted.stderr).toBe(0);
    const back = harness.codec.toCommon(harness.text.parse(converted.stdout).records, { sessionId: s.id });
    if (c.convertKeepsAll !== false) expect(blockSignature(back)).toEqual(blockSignature(common));
    const nativeFile = join(c.scratch, `${s.id}.native`);
    await writeFile(nativeFile, converted.stdout);
    const toSimple = await runCli(['convert', nativeFile, '--from', c.harness, '--to', 'simple'], {
      env: c.env,
    });
    expect(toSimple.code, toSimple.stderr).toBe(0);
    const again = simple.codec.toCommon(simple.text.parse(toSimple.stdout).records, { sessionId: s.id });
    if (c.convertKeepsAll !== false) expect(blockSignature(again)).toEqual(blockSignature(common));

    // search, first with the index, then scanning
    for (const index of [[], ['--no-index']]) {
      const found = await runCli(['search', s.word, '--from', c.harness, '--json', ...index], { env: c.env });
      expect(found.code, found.stderr).toBe(0);
      const hits = JSON.parse(found.stdout) as { id: string }[];
      expect(hits.map((h) => h.id)).toContain(s.id);
    }
    if (s.hidden !== undefined) {
      const none = await runCli(['search', s.hidden, '--from', c.harness, '--json'], { env: c.env });
      expect((JSON.parse(none.stdout || '[]') as unknown[]).length).toBe(0);
    }

    // continue into the harness itself, as a new session in a folder laid out as its store
    if (c.continueInto !== undefined) {
      const dir = join(c.scratch, `continued-${s.id}`);
      const cont = await runCli(['continue', s.id, '--from', c.harness, '--with', c.harness, '--out', dir], {
        env: c.env,
      });
      expect(cont.code, cont.stderr).toBe(0);
      const newId = /session: (\S+)/.exec(cont.stdout)?.[1];
      expect(newId).toBeDefined();
      const file = /file: +(.+)/.exec(cont.stdout)?.[1];
      expect(existsSync(file!)).toBe(true);
      const reread =
        (await c.continueInto.reread?.(file!, newId!)) ??
        (await harness.store!({ ...c.env, ...c.continueInto.outEnv(dir) }).load(newId!)).transcript;
      expect(blockSignature(reread)).toEqual(blockSignature(common));
      expect(reread.meta.title).toBe(s.title);
    }
  }
}

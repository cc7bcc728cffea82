/**
 * How view and export find a session by its exact id in one store: straight
 * from where the store keeps it, without listing the store, and the
 * listing's way whenever only the listing can say (real Claude Code files in
 * a temp folder).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../test/run-cli.ts';
import { claudeCode } from '../harness/claude-code/index.ts';
import type { Harness } from '../harness/types.ts';

const SID = '6f5e4d3c-2b1a-4098-8f7e-6d5c4b3a2f1e';
const env = `"isSidechain":false,"userType":"external","cwd":"/w/app","sessionId":"${SID}","version":"2.1.3"`;
const user = (uuid: string, content: string): string =>
  `{"parentUuid":null,${env},"type":"user","message":{"role":"user","content":${JSON.stringify(content)}},"uuid":"${uuid}","timestamp":"2026-03-01T10:00:01.000Z"}`;
const assistant = (uuid: string, text: string): string =>
  `{"parentUuid":"u1",${env},"type":"assistant","message":{"id":"m_${uuid}","type":"message","role":"assistant","model":"claude-opus-4-1","content":[{"type":"text","text":${JSON.stringify(text)}}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"${uuid}","timestamp":"2026-03-01T10:00:02.000Z"}`;

let dir: string;
let root: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txcript-open-session-'));
  root = join(dir, 'projects');
  await mkdir(join(root, '-w-app'), { recursive: true });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The Claude Code harness over `root`, with a store that refuses to list. */
function unlisted(): Harness {
  return {
    ...claudeCode,
    store: (e) => ({
      ...claudeCode.store!(e),
      discover: () => Promise.reject(new Error('the store was listed')),
    }),
  };
}

const cli = (args: string[], harnesses?: readonly Harness[]) =>
  runCli(args, {
    env: { HOME: dir, TXCRIPT_CLAUDE_CODE_ROOT: root, TXCRIPT_NO_CACHE: '1', NO_COLOR: '1' },
    ...(harnesses !== undefined ? { harnesses } : {}),
  });

describe('view and export by exact id with --from', () => {
  it('load the session from its file without listing the store', async () => {
    await writeFile(
      join(root, '-w-app', `${SID}.jsonl`),
      `${user('u1', 'Fix the build')}\n${assistant('a1', 'done')}\n`,
    );
    const exported = await cli(['export', SID, '--from', 'claude_code'], [unlisted()]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ id: SID, title: 'Fix the build' });
    const viewed = await cli(['view', `${SID}#-1`, '--from', 'claude_code'], [unlisted()]);
    expect(viewed.code).toBe(0);
    expect(viewed.stdout).toContain('done');
    // An id prefix is for the listing to resolve.
    const prefixed = await cli(['export', SID.slice(0, 8), '--from', 'claude_code'], [unlisted()]);
    expect(prefixed.code).toBe(1);
    expect(prefixed.stderr).toContain('the store was listed');
  });

  it('take the title from the listing when the session has none of its own', async () => {
    // Only harness markup for a prompt: no title from the file; a summary-only file beside it titles it.
    await writeFile(
      join(root, '-w-app', `${SID}.jsonl`),
      `${user('u1', '<command-name>/x</command-name> x')}\n${assistant('a1', 'done')}\n`,
    );
    await writeFile(
      join(root, '-w-app', '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.jsonl'),
      `${JSON.stringify({ type: 'summary', summary: 'Build fixed', leafUuid: 'a1' })}\n`,
    );
    const exported = await cli(['export', SID, '--from', 'claude_code']);
    expect(exported.code).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ title: 'Build fixed' });
  });

  it('still refuse an id two project folders hold, naming both', async () => {
    const text = `${user('u1', 'Fix the build')}\n${assistant('a1', 'done')}\n`;
    await writeFile(join(root, '-w-app', `${SID}.jsonl`), text);
    await mkdir(join(root, '-w-other'));
    await writeFile(join(root, '-w-other', `${SID}.jsonl`), text);
    const r = await cli(['export', SID, '--from', 'claude_code']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`"${SID}" is the id of 2 sessions`);
  });
});

/**
 * `streamClaudeCommon` (a whole export in bounded memory) gives exactly what
 * `readClaudeCommon` gives: the same meta, messages and warnings, for the
 * cases where the two passes could disagree with one pass.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warning } from '../types.ts';
import { fileLines, linesOfFile } from '../jsonl-file.ts';
import { readClaudeCommon, streamClaudeCommon } from './codec.ts';

const SID = '0b9f7a52-3c1e-4d6a-9f00-7e2d1c4b5a69';
const env = `"cwd":"/w","sessionId":"${SID}","version":"2.0.14","gitBranch":"main"`;
const user = (uuid: string, text: string, extra = ''): string =>
  `{"parentUuid":null,"isSidechain":false,${env},"type":"user","message":{"role":"user","content":${JSON.stringify(text)}},"uuid":"${uuid}","timestamp":"2026-01-02T03:04:0${uuid.slice(-1)}.000Z"${extra}}`;
const assistant = (uuid: string, text: string, extra = ''): string =>
  `{"parentUuid":null,"isSidechain":false,${env},"type":"assistant","message":{"role":"assistant","model":"claude-x","content":[{"type":"text","text":${JSON.stringify(text)}}]},"uuid":"${uuid}","timestamp":"2026-01-02T03:04:0${uuid.slice(-1)}.000Z"${extra}}`;
const sidechain = (line: string): string => line.replace('"isSidechain":false', '"isSidechain":true');
const untimed = (line: string): string => line.replace(/,"timestamp":"[^"]*"/, '');

const CASES: Record<string, string[]> = {
  'plain, titled by its first prompt': [user('u1', 'Fix the parser'), assistant('u2', 'Done.')],
  'titled by a summary whose leaf comes before it': [
    user('u1', 'Fix it'),
    assistant('u2', 'Done.'),
    `{"type":"summary","summary":"Parser fix","leafUuid":"u2"}`,
  ],
  'a summary whose leaf is not in the file': [
    `{"type":"summary","summary":"Elsewhere","leafUuid":"zz"}`,
    user('u1', 'Fix it'),
    assistant('u2', 'Done.'),
  ],
  'a custom title over a summary': [
    `{"type":"summary","summary":"Parser fix","leafUuid":"u2"}`,
    user('u1', 'Fix it'),
    assistant('u2', 'Done.'),
    `{"type":"custom-title","customTitle":"My name","sessionId":"${SID}"}`,
  ],
  'untimed messages, dated by the earliest time': [
    untimed(user('u1', 'first, untimed')),
    assistant('u5', 'timed'),
    untimed(user('u3', 'untimed again')),
    assistant('u2', 'earlier time, later line'),
  ],
  'inline sidechain lines left out of the main conversation': [
    user('u1', 'Delegate'),
    sidechain(user('u2', 'sub prompt')),
    sidechain(assistant('u3', 'sub answer')),
    assistant('u4', 'Delegated.'),
  ],
  'a subagent file: every line a sidechain': [
    sidechain(user('u1', 'sub prompt')),
    sidechain(assistant('u2', 'sub answer')),
  ],
  'malformed lines, a torn line and a bad block': [
    user('u1', 'Hi'),
    'not json',
    `{"parentUuid":null,${env},"type":"assistant","message":{"role":"assistant","content":[{"type":"text"}]},"uuid":"u2"}`,
    assistant('u3', 'ok').slice(0, 40),
  ],
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'claude-stream-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('claude_code streamCommon', () => {
  for (const [name, lines] of Object.entries(CASES)) {
    it(`gives what readCommon gives: ${name}`, async () => {
      const file = path.join(dir, `${name.replace(/\W+/g, '-')}.jsonl`);
      await writeFile(file, `${lines.join('\n')}\n`);
      const ctx = { sessionId: 'fallback', source: file };
      const readWarnings: Warning[] = [];
      const whole = readClaudeCommon(linesOfFile(file), file, {
        ...ctx,
        onWarning: (w) => readWarnings.push(w),
      });
      const streamWarnings: Warning[] = [];
      const streamed = streamClaudeCommon(() => fileLines(file), file, {
        ...ctx,
        onWarning: (w) => streamWarnings.push(w),
      });
      expect(streamed.meta).toEqual(whole.transcript.meta);
      expect(streamed.count).toBe(whole.transcript.messages.length);
      expect(streamed.warnings).toEqual(whole.warnings);
      expect(streamWarnings).toEqual(readWarnings);
      // Read again on every call, and the codec's warnings are not given twice.
      expect([...streamed.messages()]).toEqual(whole.transcript.messages);
      expect([...streamed.messages()]).toEqual(whole.transcript.messages);
      expect(streamWarnings).toEqual(readWarnings);
    });
  }
});

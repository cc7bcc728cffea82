/**
 * One conversation carried through every codec, Simple → grok_bot →
 * claude_code → codex → Simple, with `continueSession` (the code behind
 * `txcript continue`) writing real files at every hop that has a store: the
 * grok_bot hop is a live mint into a real box. After each hop the native
 * text is re-read with the text codec (render(parse(t)) === t), the session
 * is loaded back from its store, and its block signature is checked.
 *
 * Documented normalisations, per hop:
 * - grok_bot: none in the signature (a foreign tool would take the box's name,
 *   continue/box-tools.ts; Bash, Read and Edit are shell, read and edit there already).
 *   Tool results gain a `success`/`failure`
 *   envelope (content, not shape); the orphan result stays an orphan
 *   (`name: "unknown"`, explicit id), decision C3.
 * - claude_code: orphan repair (harness/orphans.ts): the orphan result
 *   becomes user text `[tool result for unknown call <id>] …`, because the
 *   Anthropic API refuses a result without its call.
 * - codex: none beyond claude_code's (its repair is idempotent). Codex reads
 *   one message per item, so blocks come back split into more messages; the
 *   signature ignores message boundaries for that reason.
 * - Simple: none.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  commonToSimple,
  continueSession,
  findHarness,
  grokBot,
  renderSimple,
  simple,
  type ContinueResult,
  type Harness,
  type Transcript,
} from '@sendbox/txcript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceConversation, signature, startMintBox, texts, type MintBox } from './continue-support.ts';

let mb: MintBox;
let work: string;

beforeAll(async () => {
  mb = await startMintBox();
  work = await mkdtemp(path.join(os.tmpdir(), 'txcript-cross-'));
});

afterAll(async () => {
  await mb.close();
  await rm(work, { recursive: true, force: true });
});

/** The file a result wrote. */
function fileOf(result: ContinueResult): string {
  return result.kind === 'minted' ? result.mint.jsonlPath : result.locator;
}

/** Re-read the native text a hop wrote: the text codec must give it back byte for byte. */
async function assertTextRoundTrip(harness: Harness, file: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const parsed = harness.text.parse(text, file);
  expect(parsed.warnings).toEqual([]);
  expect(harness.text.render(parsed.records)).toBe(text);
}

/** Continue into `harness`, check the native text, and load the new session back from the store. */
async function hop(
  from: Transcript,
  harness: Harness,
  env: Record<string, string>,
): Promise<{ result: ContinueResult; loaded: Transcript }> {
  const result = await continueSession(from, harness, { env, cwd: work });
  expect(result.id).not.toBe(from.meta.id);
  await assertTextRoundTrip(harness, fileOf(result));
  const loaded = await harness.store!(env).load(result.id);
  expect(loaded.source).toBe(fileOf(result));
  expect(loaded.transcript.meta.id).toBe(result.id);
  return { result, loaded: loaded.transcript };
}

describe('Simple → grok_bot → claude_code → codex → Simple', () => {
  it('keeps the block signature at every hop, up to the documented normalisations', async () => {
    const reference = referenceConversation();
    const original = signature(reference);
    expect(original).toEqual([
      'user text',
      'assistant thinking',
      'assistant text',
      'assistant tool_use Bash',
      'user tool_result Bash error',
      'assistant tool_use Edit',
      'user tool_result Edit',
      'assistant tool_use Raw:web_search',
      'user tool_result Raw:web_search',
      'user tool_result (orphan)',
      'assistant text',
    ]);
    const boxed = original;
    // claude_code onwards: the orphan result is user text (orphan repair).
    const repaired = boxed.map((s) => (s === 'user tool_result (orphan)' ? 'user text' : s));

    // Hop 0: a Simple document on disk, read as `continue run.json` reads it.
    const simpleFile = path.join(work, 'run.json');
    await writeFile(simpleFile, renderSimple(commonToSimple(reference)));
    await assertTextRoundTrip(simple, simpleFile);
    const s0 = simple.codec.toCommon(
      simple.text.parse(await readFile(simpleFile, 'utf8'), simpleFile).records,
      {
        sessionId: 'run',
      },
    );
    expect(signature(s0)).toEqual(original);

    // Hop 1: a live mint into the box.
    const g = await hop(s0, grokBot, mb.env);
    expect(g.result.kind).toBe('minted');
    expect(signature(g.loaded)).toEqual(boxed);
    expect(texts(g.loaded)).toEqual(texts(reference));

    // Hop 2: Claude Code's store in a temp CLAUDE_CONFIG_DIR.
    const claudeEnv = { ...mb.env, CLAUDE_CONFIG_DIR: path.join(work, 'claude') };
    const c = await hop(g.loaded, findHarness('claude_code'), claudeEnv);
    expect(
      c.result.kind === 'saved' && c.result.locator.startsWith(path.join(work, 'claude', 'projects')),
    ).toBe(true);
    expect(signature(c.loaded)).toEqual(repaired);
    const orphanText = texts(c.loaded).find((t) =>
      t.startsWith('[tool result for unknown call call_ghost_9]'),
    );
    expect(orphanText).toContain('stray output');

    // Hop 3: Codex's store in a temp CODEX_HOME.
    const codexEnv = { ...mb.env, CODEX_HOME: path.join(work, 'codex') };
    const x = await hop(c.loaded, findHarness('codex'), codexEnv);
    expect(signature(x.loaded)).toEqual(repaired);
    expect(texts(x.loaded)).toEqual(texts(c.loaded));

    // Hop 4: back to a Simple document.
    const back = renderSimple(commonToSimple(x.loaded));
    const s4 = simple.codec.toCommon(simple.text.parse(back, 'back.json').records, { sessionId: 'back' });
    expect(signature(s4)).toEqual(repaired);
    expect(texts(s4)).toEqual(texts(c.loaded));
    expect(new Set([s0.meta.id, g.result.id, c.result.id, x.result.id]).size).toBe(4);
  });
});

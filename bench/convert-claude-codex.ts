/**
 * Claude Code -> Codex conversion throughput.
 *
 * Generates a ~50 MB Claude Code session (prompts, thinking, Bash / Read /
 * Edit calls, multi-KB tool results), then times the whole conversion:
 * parse -> toCommon -> fromCommon -> render. Prints MB/s per stage and the
 * peak RSS. Run: `npx tsx bench/convert-claude-codex.ts [sizeMB]`.
 */
import { randomUUID } from 'node:crypto';
import { claudeSessionText } from '../packages/txcript/test/fixtures/claude-code/generate.ts';
import { performance } from 'node:perf_hooks';
import { claudeCodeCodec, claudeCodeText } from '../packages/txcript/src/harness/claude-code/index.ts';
import { codexCodec, codexText } from '../packages/txcript/src/harness/codex/index.ts';

const targetMb = Number(process.argv[2] ?? 50);
const sessionId = randomUUID();

/** A Claude Code session of about `bytes` bytes, from the fixture generator the CLI bench uses too. */
function generate(bytes: number): string {
  const perTurn =
    Buffer.byteLength(
      claudeSessionText({ sessionId, cwd: '/home/dev/app', turns: 10, resultLines: 60, seed: 3 }),
    ) / 10;
  return claudeSessionText({
    sessionId,
    cwd: '/home/dev/app',
    turns: Math.max(1, Math.round(bytes / perTurn)),
    resultLines: 60,
    seed: 3,
  });
}

const mb = (n: number): number => n / (1024 * 1024);
const text = generate(targetMb * 1024 * 1024);
const inputMb = mb(Buffer.byteLength(text));

const t0 = performance.now();
const parsed = claudeCodeText.parse(text, 'bench.jsonl');
const t1 = performance.now();
const common = claudeCodeCodec.toCommon(parsed.records, { sessionId });
const t2 = performance.now();
const rollout = codexCodec.fromCommon(common);
const t3 = performance.now();
const out = codexText.render(rollout);
const t4 = performance.now();

const rate = (ms: number): string => `${(inputMb / (ms / 1000)).toFixed(1)} MB/s`;
console.log(
  `input: ${inputMb.toFixed(1)} MB Claude Code JSONL, ${parsed.records.length} lines, ${common.messages.length} Common messages`,
);
console.log(`output: ${mb(Buffer.byteLength(out)).toFixed(1)} MB Codex rollout, ${rollout.length} lines`);
console.log(`parse      ${(t1 - t0).toFixed(0).padStart(6)} ms  ${rate(t1 - t0)}`);
console.log(`toCommon   ${(t2 - t1).toFixed(0).padStart(6)} ms  ${rate(t2 - t1)}`);
console.log(`fromCommon ${(t3 - t2).toFixed(0).padStart(6)} ms  ${rate(t3 - t2)}`);
console.log(`render     ${(t4 - t3).toFixed(0).padStart(6)} ms  ${rate(t4 - t3)}`);
console.log(
  `total      ${(t4 - t0).toFixed(0).padStart(6)} ms  ${rate(t4 - t0)} (input MB per second, end to end)`,
);
console.log(`peak RSS   ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
if (parsed.warnings.length > 0) console.log(`warnings: ${parsed.warnings.length}`);

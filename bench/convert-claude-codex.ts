/**
 * Claude Code -> Codex conversion throughput.
 *
 * Generates a ~50 MB Claude Code session (prompts, thinking, Bash / Read /
 * Edit calls, multi-KB tool results), then times the whole conversion:
 * parse -> toCommon -> fromCommon -> render. Prints MB/s per stage and the
 * peak RSS. Run: `npx tsx bench/convert-claude-codex.ts [sizeMB]`.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { claudeCodeCodec, claudeCodeText } from '../packages/txcript/src/harness/claude-code/index.ts';
import { codexCodec, codexText } from '../packages/txcript/src/harness/codex/index.ts';

const targetMb = Number(process.argv[2] ?? 50);
const sessionId = randomUUID();

function generate(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  let parent: string | null = null;
  let t = Date.UTC(2026, 0, 1);
  const base = {
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/app',
    sessionId,
    version: '2.0.14',
    gitBranch: 'main',
  };
  const push = (type: 'user' | 'assistant', message: object, extra: object = {}): void => {
    const uuid = randomUUID();
    t += 1000;
    const line = JSON.stringify({
      parentUuid: parent,
      ...base,
      type,
      message,
      uuid,
      timestamp: new Date(t).toISOString(),
      ...extra,
    });
    lines.push(line);
    size += line.length + 1;
    parent = uuid;
  };
  const filler = 'const value = compute(input) // lorem ipsum dolor sit amet\n'.repeat(60);
  for (let i = 0; size < bytes; i++) {
    push('user', { role: 'user', content: `Step ${i}: please refactor module ${i} and run the tests` });
    const id = `toolu_${i.toString(36).padStart(8, '0')}`;
    const tools = [
      { name: 'Bash', input: { command: `npm test -- m${i}`, description: 'Run tests', timeout: 120000 } },
      { name: 'Read', input: { file_path: `/home/dev/app/src/m${i}.ts` } },
      {
        name: 'Edit',
        input: { file_path: `/home/dev/app/src/m${i}.ts`, old_string: 'let x', new_string: 'const x' },
      },
    ];
    const tool = tools[i % 3]!;
    push('assistant', {
      id: `msg_${i}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        {
          type: 'thinking',
          thinking: `Plan for step ${i}. `.repeat(20),
          signature: 'EqQBCkgIARABGAIiQL'.repeat(8),
        },
        { type: 'text', text: `Working on module ${i}.` },
        { type: 'tool_use', id, ...tool },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 1200,
        output_tokens: 300,
        cache_read_input_tokens: 9000,
        cache_creation_input_tokens: 40,
      },
    });
    push(
      'user',
      {
        role: 'user',
        content: [{ tool_use_id: id, type: 'tool_result', content: filler, is_error: i % 17 === 0 }],
      },
      { toolUseResult: { stdout: filler, stderr: '', interrupted: false } },
    );
  }
  return lines.join('\n') + '\n';
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

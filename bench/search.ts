/**
 * txcript search over a generated tree of Claude Code, Codex and Grok Bot
 * sessions (default 2,000 sessions, about 1 GB), written under /tmp through
 * the stores' own writers and removed afterwards.
 *
 *   npx tsx bench/search.ts [sessions] [kB per session]
 *
 * TXCRIPT_BENCH_DIR=<dir> keeps the tree there and reuses it on the next run
 * (the index is built afresh unless TXCRIPT_BENCH_INDEX=keep, which times the
 * queries on the index the last run left). Wall times depend on the machine's
 * load (printed); CPU times less so.
 *
 * Targets: first index < 60 s; update after one new session < 1 s; query p99
 * over 100 queries < 100 ms; MCP search_sessions round trip p99 < 200 ms.
 * TXCRIPT_BENCH_VERBOSE=1 lists every query with its times and the index
 * that found its matches (the word or the trigram index).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createContext } from '../packages/txcript/src/cli/context.ts';
import { claudeCode } from '../packages/txcript/src/harness/claude-code/index.ts';
import { codex } from '../packages/txcript/src/harness/codex/index.ts';
import { grokBot } from '../packages/txcript/src/harness/grok-bot/index.ts';
import type { Harness } from '../packages/txcript/src/harness/types.ts';
import type { Message, Transcript } from '../packages/txcript/src/model/common.ts';
import { SessionIndex } from '../packages/txcript/src/search/engine.ts';
import { findHits, matchPlan } from '../packages/txcript/src/search/hits.ts';
import { indexFile } from '../packages/txcript/src/search/index-db.ts';
import { parseQuery } from '../packages/txcript/src/search/query.ts';
import { searchTree } from '../packages/txcript/test/fixtures/search/generate.ts';

const SESSIONS = Number(process.argv[2] ?? 2000);
const KB = Number(process.argv[3] ?? 500);

/** A deterministic generator, so runs are comparable. */
let seed = 42;
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tas',
  'vo',
  'pel',
  'dri',
  'sun',
  'gar',
  'bex',
  'qui',
  'zor',
  'fen',
  'ul',
];
/** 8,000 words; sampled with a skew so some are common and many rare. */
const WORDS = Array.from({ length: 8000 }, (_, i) => {
  let w = '';
  let n = i + 1;
  do {
    w += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  } while (n > 0);
  return w;
});
const word = (): string => WORDS[Math.floor(WORDS.length * random() ** 3)]!;
const sentence = (n: number): string => Array.from({ length: n }, word).join(' ');
/** A pool of paragraphs to build large outputs from quickly. */
const POOL = Array.from({ length: 4000 }, () => sentence(12 + Math.floor(random() * 20)));
const paragraph = (chars: number): string => {
  let out = '';
  while (out.length < chars) out += `${pick(POOL)}\n`;
  return out;
};

function session(id: string, n: number, start: number): Transcript {
  const messages: Message[] = [];
  let t = start;
  const ts = () => new Date((t += 1000)).toISOString();
  const turnBytes = 12_000;
  const turns = Math.max(1, Math.round((KB * 1024) / turnBytes));
  for (let k = 0; k < turns; k++) {
    messages.push({
      role: 'user',
      content: [{ type: 'text', text: `${sentence(30)} ticket-${n}-${k}` }],
      timestamp: ts(),
    });
    messages.push({
      role: 'assistant',
      content: [{ type: 'thinking', text: paragraph(600) }],
      timestamp: ts(),
    });
    const call = `${id}-c${k}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: call, tool: { name: 'Bash', command: `grep -rn ${word()} src/${word()}` } },
      ],
      timestamp: ts(),
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: call, content: paragraph(8000) }],
      timestamp: ts(),
    });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: paragraph(500) }], timestamp: ts() });
  }
  return { meta: { id, timestamp: new Date(start).toISOString(), cwd: `/work/project-${n % 40}` }, messages };
}

const uuid = (n: number) =>
  `${n.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const HARNESSES: Array<[Harness, (n: number) => string]> = [
  [claudeCode, uuid],
  [codex, uuid],
  [grokBot, (n) => `agent-bench-${n}`],
];

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const kept = process.env.TXCRIPT_BENCH_DIR;
const home = kept ?? (await mkdtemp(join(tmpdir(), 'txcript-search-bench-')));
try {
  const tree = searchTree(home);
  let t0 = performance.now();
  if (kept !== undefined && existsSync(join(home, 'generated'))) {
    console.log(`reusing          ${home}`);
  } else {
    let bytes = 0;
    for (let n = 0; n < SESSIONS; n++) {
      const [harness, idOf] = HARNESSES[n % HARNESSES.length]!;
      const t = session(idOf(n), n, Date.UTC(2026, 0, 1) + n * 60_000);
      const { locator } = await harness.store!(tree.env).save!(t);
      bytes += statSync(locator).size;
    }
    writeFileSync(join(home, 'generated'), '');
    console.log(
      `generated        ${SESSIONS} sessions, ${(bytes / 2 ** 20).toFixed(0)} MiB, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }
  const keepIndex = process.env.TXCRIPT_BENCH_INDEX === 'keep';
  if (!keepIndex) rmSync(join(home, 'cache'), { recursive: true, force: true });
  console.log(`load average     ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs`);

  const io = {
    stdout: { write: () => true },
    stderr: { write: (s: string) => process.stderr.write(s) },
    readStdin: () => Promise.resolve(''),
    env: tree.env,
    // The generated files are minutes "old" for the racy window.
    now: () => new Date(Date.now() + 60_000),
  };
  const ctx = createContext(io);

  const index = new SessionIndex(ctx);
  t0 = performance.now();
  const cpu0 = process.cpuUsage();
  await index.use(undefined, () => undefined);
  const first = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const size = ['', '-wal'].reduce(
    (sum, s) => sum + (statSync(`${indexFile(tree.env)}${s}`, { throwIfNoEntry: false })?.size ?? 0),
    0,
  );
  console.log(
    `${keepIndex ? 'kept index  ' : 'first index '}     ${first.toFixed(1)} s (target < 60 s), CPU time ${cpuS.toFixed(1)} s; ${index.lastStats!.read} sources read; index ${(size / 2 ** 20).toFixed(0)} MiB; load average ${loadavg()[0]!.toFixed(1)}`,
  );

  t0 = performance.now();
  await index.use(undefined, () => undefined);
  console.log(`no-change update ${(performance.now() - t0).toFixed(0)} ms (${index.lastStats!.read} read)`);

  const extra = SESSIONS + 1 + (Date.now() % 1_000_000);
  await claudeCode.store!(tree.env).save!(session(uuid(extra), extra, Date.UTC(2026, 6, 1)));
  t0 = performance.now();
  await index.use(undefined, () => undefined);
  console.log(
    `one new session  ${(performance.now() - t0).toFixed(0)} ms (target < 1000 ms; ${index.lastStats!.read} read)`,
  );

  // 100 queries of every kind: common and rare words, pairs, phrases, exclusions, typos, short terms.
  // Seeded again: the same queries whether the tree was generated now or reused.
  seed = 4242;
  const queries: string[] = [];
  for (let q = 0; q < 100; q++) {
    const common = WORDS[Math.floor(random() * 20)]!;
    const mid = WORDS[200 + Math.floor(random() * 2000)]!;
    const kinds = [
      () => common,
      () => mid,
      () => `ticket-${Math.floor(random() * SESSIONS)}-3`,
      () => `${common} ${mid}`,
      () => `"${pick(POOL).split(' ').slice(2, 5).join(' ')}"`,
      () => `${mid} -${common}`,
      () => `${mid.length >= 6 ? mid.slice(0, 2) + mid.slice(3) : mid}~`,
      () => `${mid} ka`,
    ];
    queries.push(kinds[q % kinds.length]!());
  }
  const times: number[] = [];
  const cpuTimes: number[] = [];
  /** Which index found each query's matches (words.ts), for the verbose listing. */
  const plans: string[] = [];
  await index.use(
    undefined,
    (i) => {
      for (const q of queries) plans.push(matchPlan(i, parseQuery(q))?.index ?? 'none');
      for (const q of queries) {
        const s = performance.now();
        const c = process.cpuUsage();
        findHits(i, parseQuery(q), { limit: 20 });
        const used = process.cpuUsage(c);
        times.push(performance.now() - s);
        cpuTimes.push((used.user + used.system) / 1000);
      }
    },
    Infinity,
  );
  const slowest = queries[times.indexOf(Math.max(...times))];
  const KIND_NAMES = [
    'common word',
    'mid word',
    'rare word',
    'two words',
    'phrase',
    'exclusion',
    'typo~',
    'short term',
  ];
  const byKind = KIND_NAMES.map((name, k) => {
    const own = times.filter((_, i) => i % KIND_NAMES.length === k);
    return `${name} ${percentile(own, 50).toFixed(0)}/${Math.max(...own).toFixed(0)}`;
  });
  console.log(`  by kind (median/max ms): ${byKind.join(', ')}`);
  if (process.env.TXCRIPT_BENCH_VERBOSE === '1')
    queries.forEach((q, i) =>
      console.log(`  ${times[i]!.toFixed(1)} ms (CPU ${cpuTimes[i]!.toFixed(1)}, ${plans[i]})  ${q}`),
    );
  console.log(
    `query            p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms (target < 100 ms), max ${Math.max(...times).toFixed(1)} ms (${slowest}); CPU p50 ${percentile(cpuTimes, 50).toFixed(1)} ms, p99 ${percentile(cpuTimes, 99).toFixed(1)} ms; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  index.close();

  const bin = fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp'],
      env: { PATH: process.env.PATH ?? '', ...tree.env },
    }),
  );
  t0 = performance.now();
  await client.callTool({ name: 'search_sessions', arguments: { query: 'warm up' } });
  const warm = performance.now() - t0;
  const rounds: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    await client.callTool({ name: 'search_sessions', arguments: { query: q } });
    rounds.push(performance.now() - s);
  }
  await client.close();
  console.log(
    `mcp search       first call ${warm.toFixed(0)} ms (refresh); then p50 ${percentile(rounds, 50).toFixed(1)} ms, p99 ${percentile(rounds, 99).toFixed(1)} ms (target < 200 ms); load average ${loadavg()[0]!.toFixed(1)}`,
  );
} finally {
  if (kept === undefined) await rm(home, { recursive: true, force: true });
}

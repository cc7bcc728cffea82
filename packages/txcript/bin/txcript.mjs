#!/usr/bin/env node
// The txcript CLI (see run-entry.mjs for how the TypeScript sources are started).
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runEntry } from './run-entry.mjs';

// V8 hands a function to its optimising compiler once it has run a small budget of bytecode, a
// policy made for programs that run for minutes. A txcript command runs for a fraction of a second
// to a few seconds: at the default budget a warm `list` of 2,000 sessions spent a fifth of its CPU
// time compiling loops that had finished by the time the code was ready. About fifteen times Node
// 20's budget leaves the optimising compiler to code that runs long (bench/cli-claude-code.ts
// measures both). V8 has had the flag for a decade; newer ones keep it for their top tier.
setFlagsFromString('--interrupt-budget=1000000');

await runEntry({
  entry: fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
  bundle: fileURLToPath(new URL('../dist/cli/txcript.mjs', import.meta.url)),
  packages: ['protocol', 'txcript'],
});

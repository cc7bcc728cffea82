#!/usr/bin/env node
// The txcript CLI (see run-entry.mjs for how the TypeScript sources are started).
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runEntry } from './run-entry.mjs';

// V8's on-disk code cache (Node 22+): a start after the first reads the compiled bytecode of the
// bundle and its chunks instead of parsing and compiling them again (bench/cli-claude-code.ts
// measures a start with and without it). Kept in Node's own default folder under the OS temp dir.
enableCompileCache();

await runEntry({
  entry: fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
  bundle: fileURLToPath(new URL('../dist/cli/txcript.mjs', import.meta.url)),
  packages: ['protocol', 'txcript'],
});

#!/usr/bin/env node
// The txcript CLI (see run-entry.mjs for how the TypeScript sources are started).
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runEntry } from './run-entry.mjs';

// V8's on-disk code cache (Node 22+): a start after the first reads the compiled bytecode of the
// bundle and its chunks instead of parsing and compiling them again (docs/cli.md, "Start-up";
// NODE_DISABLE_COMPILE_CACHE=1 turns it off to compare). Kept in Node's default folder in the temp dir.
enableCompileCache();

await runEntry({
  entry: fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
  bundle: fileURLToPath(new URL('../dist/cli/txcript.mjs', import.meta.url)),
  packages: ['protocol', 'txcript'],
});

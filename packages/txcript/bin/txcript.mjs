#!/usr/bin/env node
// The txcript CLI (see run-entry.mjs for how the TypeScript sources are started).
import { fileURLToPath } from 'node:url';
import { runEntry } from './run-entry.mjs';

await runEntry({
  entry: fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
  bundle: fileURLToPath(new URL('../dist/cli/txcript.mjs', import.meta.url)),
  packages: ['protocol', 'txcript'],
});

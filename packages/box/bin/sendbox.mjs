#!/usr/bin/env node
// The sendbox CLI. The sources are TypeScript with no build step: txcript's launcher runs an esbuild
// bundle of them (rebuilt when a source of protocol, txcript or box changes), or the sources through tsx.
// The bundle sits at dist/cli/, the depth of src/cli/, so the `import.meta.url`-relative paths there
// (`../../package.json`, `../../../web/`) name the same files either way.
import { fileURLToPath } from 'node:url';
import { runEntry } from '@sendbox/txcript/run-entry';

await runEntry({
  entry: fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)),
  bundle: fileURLToPath(new URL('../dist/cli/sendbox.mjs', import.meta.url)),
  packages: ['protocol', 'txcript', 'box'],
});

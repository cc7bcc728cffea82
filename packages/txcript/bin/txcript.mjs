#!/usr/bin/env node
// The txcript CLI. The sources are TypeScript run without a build step:
// register tsx's ESM loader, then load the entry point.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

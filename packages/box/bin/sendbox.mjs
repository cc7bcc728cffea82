#!/usr/bin/env node
// The box runs from TypeScript sources (no build step): register tsx, then load the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');

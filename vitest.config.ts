import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.tsx'],
    // Browser tests take 15-20 s each on a 2-core runner and twice that when it is loaded: at 30 s,
    // two ux.test.ts tests that were not wrong failed in a loaded run.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});

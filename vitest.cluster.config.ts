import { defineConfig } from 'vitest/config';

/** `npm run test:cluster`: several server processes on one database (test/cluster). */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.cluster.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: { LOG_LEVEL: 'silent' },
  },
});

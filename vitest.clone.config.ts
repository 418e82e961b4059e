import { defineConfig } from 'vitest/config';

/**
 * `npm run test:clone`: the README's commands on fresh clones of HEAD in private temp directories
 * (test/clone). No global setup: each clone brings its own database.
 */
export default defineConfig({
  test: {
    include: ['test/clone/**/*.clone.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 900_000,
    hookTimeout: 120_000,
  },
});

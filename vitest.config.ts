import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    fileParallelism: true,
    // A worker keeps its imported modules from one test file to the next: the app, express, pg-boss
    // and their transform are loaded once per worker instead of once per file (85 files). Each file
    // still gets a database and an app of its own (test/support/context.ts), so files share no state.
    isolate: false,
    // Three workers on two cores: the slowest files mostly wait (a 20 s database blackhole, child
    // servers draining, webhook timeouts), so a third worker fills that time, which vitest's default
    // here (cores - 1) leaves idle.
    maxWorkers: 3,
    testTimeout: 20_000,
    // No test runs twice: in race, outage, cluster and process tests an intermittent failure is the
    // bug, and a retry would hide it. A test that passes only on a retry (one given its own `retry`
    // option) is listed by the flaky reporter and fails the run.
    retry: 0,
    reporters: ['default', './test/support/flaky-reporter.ts'],
    hookTimeout: 60_000,
    env: { LOG_LEVEL: 'silent' },
    // pg-boss 10 completes a worker's jobs without awaiting the call (node_modules/pg-boss/src/manager.js,
    // onFetch): when the outage test cuts the database at that moment, that promise rejects unhandled
    // inside pg-boss (the job is retried after it expires). The server logs such rejections instead of
    // exiting (src/main.ts); here that one, and only that one, is not counted as a test error.
    onUnhandledError(error) {
      const pgBossUnawaited =
        error.message?.includes('Connection terminated unexpectedly') &&
        error.stack?.includes('pg-boss/src/manager.js');
      if (pgBossUnawaited) return false;
    },
  },
});

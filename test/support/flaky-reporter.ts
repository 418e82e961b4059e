import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Names every test that failed and then passed on a retry, with the error of the failed try, at the
 * end of the run and, when FLAKY_LOG names a file, in that file too (`.ci/run` prints it last), and
 * fails the run. vitest.config.ts retries nothing; this catches a test given a `retry` option of
 * its own, which would otherwise turn an intermittent failure green.
 */
const MAX_ERROR_LINES = 40;

/**
 * The first lines of an error, indented: enough for what a failed process printed (a server that
 * exited names its cause there), not a whole log.
 */
function excerpt(message: string): string {
  const lines = message.split('\n');
  const kept = lines.slice(0, MAX_ERROR_LINES).map((line) => line.slice(0, 300));
  if (lines.length > MAX_ERROR_LINES) kept.push(`... (${lines.length - MAX_ERROR_LINES} more lines)`);
  return kept.join('\n    ');
}

export default class FlakyReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of modules)
      for (const test of module.children.allTests()) {
        if (!test.diagnostic()?.flaky) continue;
        const errors = (test.result().errors ?? []).map((e) => excerpt(e.message)).join('\n  ---\n');
        lines.push(`flaky (passed on its retry): ${module.relativeModuleId} > ${test.fullName}: ${errors}`);
      }
    if (lines.length === 0) return;
    // A pass on a retry is a failure: the run exits non-zero, here as on CI.
    process.exitCode = 1;
    process.stdout.write(`\n${lines.join('\n')}\n`);
    if (process.env.FLAKY_LOG) appendFileSync(process.env.FLAKY_LOG, `${lines.join('\n')}\n`);
  }
}

import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Names every test that failed and then passed on its retry (CI retries a failed test once,
 * vitest.config.ts), with the error of the failed try, at the end of the run and, when FLAKY_LOG
 * names a file, in that file too (`.ci/run` prints it last, where a CI summary shows it). A retry
 * keeps a run green; this keeps the flaky test visible so that it gets fixed.
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
    process.stdout.write(`\n${lines.join('\n')}\n`);
    if (process.env.FLAKY_LOG) appendFileSync(process.env.FLAKY_LOG, `${lines.join('\n')}\n`);
  }
}

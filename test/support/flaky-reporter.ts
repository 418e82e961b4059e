import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Names every test that failed and then passed on its retry (CI retries a failed test once,
 * vitest.config.ts), with the error of the failed try, at the end of the run and, when FLAKY_LOG
 * names a file, in that file too (`.ci/run` prints it last, where a CI summary shows it). A retry
 * keeps a run green; this keeps the flaky test visible so that it gets fixed.
 */
export default class FlakyReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const module of modules)
      for (const test of module.children.allTests()) {
        if (!test.diagnostic()?.flaky) continue;
        const errors = (test.result().errors ?? []).map((e) => e.message.split('\n')[0]).join(' | ');
        lines.push(`flaky (passed on its retry): ${module.relativeModuleId} > ${test.fullName}: ${errors}`);
      }
    if (lines.length === 0) return;
    process.stdout.write(`\n${lines.join('\n')}\n`);
    if (process.env.FLAKY_LOG) appendFileSync(process.env.FLAKY_LOG, `${lines.join('\n')}\n`);
  }
}

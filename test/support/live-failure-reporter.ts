/**
 * A vitest reporter for CI on a slow machine: prints each failed test's error the moment it
 * fails (vitest's own reporters print errors only when the whole run ends, so a run cut by
 * CI's time limit never says why its tests failed), and one line per finished test file with
 * its duration and the minutes since the run started.
 *
 * Used by `.ci/run`: `vitest run --reporter=default --reporter=./test/support/live-failure-reporter.ts`.
 */
import type { Reporter, TestCase, TestModule } from 'vitest/node';

const started = Date.now();
const minutes = () => ((Date.now() - started) / 60_000).toFixed(1);

export default class LiveFailureReporter implements Reporter {
  onTestCaseResult(testCase: TestCase): void {
    const result = testCase.result();
    if (result.state !== 'failed') return;
    const where = `${testCase.module.relativeModuleId} > ${testCase.fullName}`;
    const error = result.errors[0];
    const message = String(error?.message ?? 'failed')
      .split('\n')
      .slice(0, 6)
      .join('\n    ');
    const at = error?.stacks?.find((frame) => /\.test\.ts$/.test(frame.file));
    console.log(
      `[live ${minutes()} min] FAIL ${where}\n    ${message}${at ? `\n    at ${at.file}:${at.line}` : ''}`,
    );
  }

  onTestModuleEnd(testModule: TestModule): void {
    const seconds = (testModule.diagnostic().duration / 1000).toFixed(1);
    console.log(
      `[live ${minutes()} min] done ${testModule.relativeModuleId} (${seconds} s, ${testModule.state()})`,
    );
  }
}

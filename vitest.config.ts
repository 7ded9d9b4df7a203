import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Most test files share one module graph per worker (`isolate: false`): importing the SDKs,
// the tokenizer and the engine again for each of 100+ files cost more than the tests
// themselves. Files that depend on process-wide state (environment variables, warnings given
// once per process) keep a fresh module graph of their own.
const ISOLATED = [
  'src/core/counting/unknown-model-warning.test.ts',
  'src/exporters/event-utils.test.ts',
  'src/storage/s3/s3-storage.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 180_000,
    // The summary key file a manager generates when no key is given: not in the user's home.
    // The AWS SDK prints a notice that its 2027 releases need Node 22 (the tests run on Node 20).
    env: {
      COMPACT_SUMMARY_KEY_FILE: join(tmpdir(), 'agent-compaction-tests', 'summary-key'),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    hookTimeout: 180_000,
    pool: 'forks',
    // Many tests wait on servers and child processes: two workers even on two cores.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.test.ts', 'src/**/__fixtures__/**', 'src/**/index.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: { lines: 85 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'eval/**/*.test.ts'],
          exclude: ISOLATED,
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, isolate: true },
      },
    ],
  },
});

import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Most test files share one module graph per worker (`isolate: false`): importing the SDKs,
// the tokenizer and the engine again for each of 100+ files cost more than the tests
// themselves. Files that depend on process-wide state (environment variables, warnings given
// once per process) keep a fresh module graph of their own.
const ISOLATED = [
  'src/core/counting/unknown-model-warning.test.ts',
  // Loads the encodings itself: it checks a count made while one is still loading.
  'src/core/counting/load-encoding.test.ts',
  // Counts with an encoding built in slices: in the shared graph another file may have loaded
  // it at once first (a count before `ready()`), and that one is shared instead.
  'src/core/counting/count-pieces.test.ts',
  // Counts the counters built in the process: another file's count would have built them first.
  'src/core/counting/ready-warms-counter.test.ts',
  // Checks what the last manager's shutdown drops from Node's module cache: another file's
  // manager never shut down, or its own load of gpt-tokenizer, would change it.
  'src/core/counting/gpt-tokenizer-release.test.ts',
  // Measures the whole heap: other files' caches and compiled code are not its to count.
  'test/core/heap-memory.test.ts',
  // Count the process's live managers: another file's manager never shut down holds them.
  'src/core/process-caches.test.ts',
  // Observes the first sentence segmenter and model decoding of the process.
  'src/core/summary/embedded/first-summary-warm-up.test.ts',
  'src/core/manager/ready-warms-summary.test.ts',
  // Observes the process's one draw of the span ids' prefix.
  'src/core/events/span-ids.test.ts',
  // Observes the first scoring's rank table and compiled expressions, process-wide.
  'src/core/summary/embedded/first-scoring-steps.test.ts',
  'src/core/process-caches-holds.test.ts',
  'src/core/process-caches-regexps.test.ts',
  'src/exporters/event-utils.test.ts',
  'src/storage/s3/s3-storage.test.ts',
  // Mocks the bullmq import with one that never ends: in the shared graph every later queue
  // test would wait on it.
  'test/queue/worker-unreachable-early.test.ts',
  'test/queue/worker-cli-unreachable-early.test.ts',
  // Mocks node:fs/promises for state-file.js: in the shared graph another file may have
  // imported state-file.js with the real module first (test/package/isolated-mocks.test.ts).
  'src/cli/state-file.test.ts',
];

// Not in `npm run test:quick` (COMPACT_TEST_QUICK=1): files that start real servers or
// processes (redis-server, Chromium, child processes, llama.cpp, S3, the built package and
// its CLI), and the soak and heap suites that take minutes on two cores. `npm test` runs all.
const SERVERS = [
  'test/docs/**',
  'test/queue/**',
  'test/storage/redis-*.test.ts',
  'test/storage/archive-faults.test.ts',
  'test/report/*browser*.test.ts',
  'test/cli/**',
  'test/package/**',
  'test/examples.test.ts',
  'test/core/history-jumps-property.test.ts',
  'src/storage/redis/**',
  'src/storage/s3/**',
  'src/summarizers/llama-cpp/**',
  'src/cli/mcp-server.test.ts',
  'src/core/background/background-preparation.test.ts',
];
const LONG = [
  'test/core/heap-memory.test.ts',
  'test/redaction/long-tokens.test.ts',
  'test/redaction/adversarial-inputs.test.ts',
  'test/core/real-transcripts.test.ts',
  'test/core/view-after-compaction.test.ts',
  'test/core/fast-paths.test.ts',
  'test/core/compaction-properties.test.ts',
  'test/core/long-history-warm.test.ts',
  'test/core/long-session.test.ts',
  'test/core/event-loop-slices.test.ts',
  'src/adapters/*/*-paths.test.ts',
  'eval/**',
];
const QUICK = process.env.COMPACT_TEST_QUICK === '1';
const SKIPPED_WHEN_QUICK = QUICK ? [...SERVERS, ...LONG] : [];

export default defineConfig({
  test: {
    // Upper bounds only, never a pace: a test waits for events, and a loaded two-core machine
    // (CI runs the suite beside two CPU-bound processes, see .ci/run) may take minutes over
    // what takes seconds when quiet. A test that hangs still fails, naming itself.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // The summary key file a manager generates when no key is given: not in the user's home.
    // The AWS SDK prints a notice that its 2027 releases need Node 22 (the tests run on Node 20).
    env: {
      COMPACT_SUMMARY_KEY_FILE: join(tmpdir(), 'agent-compaction-tests', 'summary-key'),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    // Child processes, not threads: tests fork workers, send signals and expose the GC.
    pool: 'forks',
    // Many tests wait on servers and child processes: two workers even on two cores (more
    // would only queue on the CPUs; fewer leaves a core idle while one file waits on I/O).
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
          exclude: [...ISOLATED, ...SKIPPED_WHEN_QUICK],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, exclude: SKIPPED_WHEN_QUICK, isolate: true },
      },
    ],
  },
});

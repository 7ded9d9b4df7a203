/**
 * One replica running a CompactManager over a shared Redis store, as a child process of
 * redis-manager-multi-process.test.ts. On `{ type: 'preflight', turns }` it compacts the
 * session's history (the first `turns` turns) through `manager.compact` and reports the
 * outcome; its summarizer reports when it starts (so the test can kill the lock holder) and
 * takes `SUMMARIZE_MS`.
 */
import { CompactManager } from '../../../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../../../src/core/summary/summarizer.js';
import { redisSessionStore } from '../../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../../support/background-fixtures.js';
import { reportToParent } from '../../support/report-to-parent.js';

/** Messages between the test and a worker. */
export type ManagerWorkerReport =
  | { type: 'ready'; worker: string }
  | { type: 'summarizing'; worker: string; at: number }
  | {
      type: 'result';
      worker: string;
      turns: number;
      version: number;
      applied: boolean;
      summary: string | undefined;
      summarizerCalls: number;
      prepared: { started: number; used: number };
      at: number;
    }
  | { type: 'settled'; worker: string; running: number };

const worker = process.env.WORKER_ID ?? String(process.pid);
const store = redisSessionStore({
  url: process.env.REDIS_URL as string,
  keyPrefix: process.env.KEY_PREFIX ?? '',
});
const report = (message: ManagerWorkerReport) => reportToParent(message);
let summarizerCalls = 0;
const options = (background: boolean) => ({
  maxContextTokens: 10_000,
  tokenCounter: charCounter,
  policy: { hardCapBuffer: 500 },
  store,
  sessionLock: { ttlMs: Number(process.env.LOCK_TTL_MS ?? 1000) },
  // The test is about locking: a slow answer on a loaded machine must not count as an outage.
  storeTimeoutMs: 10_000,
  background,
  summarizer: {
    name: `summarizer-${worker}`,
    summarize: async (request: SummarizeRequest) => {
      summarizerCalls++;
      report({ type: 'summarizing', worker, at: Date.now() });
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.SUMMARIZE_MS ?? 200)));
      return {
        text: `by ${worker}: ${request.messages.length} messages up to ${request.messages.at(-1)?.id}`,
      };
    },
  },
});
const managers = {
  plain: new CompactManager(options(false)),
  background: new CompactManager(options(true)),
};
const history = chatTurns(200);

/** A request from the test: compact the first `turns` turns (with the background manager and its own session). */
export type ManagerWorkerRequest =
  | { type: 'preflight'; turns: number; background?: boolean }
  /** Answer `settled` once the background manager's preparations are done. */
  | { type: 'settle' };

/** Resolves once the background manager runs no preparation. */
async function settle(): Promise<void> {
  while (managers.background.backgroundStatus().running > 0)
    await new Promise((resolve) => setTimeout(resolve, 5));
}

process.on('message', (message: ManagerWorkerRequest) => {
  if (message.type === 'settle') {
    void settle().then(() =>
      report({ type: 'settled', worker, running: managers.background.backgroundStatus().running }),
    );
    return;
  }
  const manager = message.background ? managers.background : managers.plain;
  const session = message.background ? 'shared-background' : 'shared';
  manager.compact(session, history.slice(0, 2 * message.turns)).then(
    (result) =>
      report({
        type: 'result',
        worker,
        turns: message.turns,
        version: result.version,
        applied: result.applied,
        summary: result.summary?.text,
        summarizerCalls,
        prepared: manager.backgroundStatus(),
        at: Date.now(),
      }),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => {
  void Promise.all([managers.plain.shutdown(), managers.background.shutdown()])
    .then(() => store.close())
    .finally(() => process.exit(0));
});
report({ type: 'ready', worker });

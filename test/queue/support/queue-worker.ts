/**
 * One preparation worker process (a child of the queue tests and bench): a real BullMQ worker
 * over a real Redis, publishing into the Redis session store. Its summarizer is scripted by
 * `MODE`: `ok` answers after `SUMMARIZE_MS`, `fail` always throws (a poisoned job), `hang`
 * never answers (a worker to be killed mid-job), `gate` answers when the parent sends a message. It reports over IPC when a summarizer starts,
 * each job run's outcome and each event it emits; it exits on `disconnect`.
 */
import type { AnyCompactEvent } from '../../../src/core/events/events.js';
import type { SummarizeRequest } from '../../../src/core/summary/summarizer.js';
import {
  type PreparationJobOutcome,
  type PreparationWorkerStatus,
  startPreparationWorker,
} from '../../../src/queue/index.js';
import { redisSessionStore } from '../../../src/storage/redis/index.js';
import { reportToParent } from '../../support/report-to-parent.js';
import { previousMark } from './queue-worker-mark.js';

/** Messages from a worker to its parent. */
export type QueueWorkerReport =
  | { type: 'ready'; worker: string }
  | { type: 'summarizing'; worker: string; sessionId: string; messages: number }
  | { type: 'job'; worker: string; outcome: PreparationJobOutcome }
  | {
      type: 'event';
      worker: string;
      name: string;
      code?: string;
      sessionId: string;
      summarizer?: string;
      error?: string;
    }
  | { type: 'status'; worker: string; status: PreparationWorkerStatus };

// A machine whose clock runs apart from the agents' by CLOCK_SKEW_MS (fleet-clock-skew.test.ts).
const skew = Number(process.env.CLOCK_SKEW_MS ?? 0);
if (skew !== 0) {
  const now = Date.now.bind(Date);
  Date.now = () => now() + skew;
}
const worker = process.env.WORKER_ID ?? String(process.pid);
const mode = process.env.MODE ?? 'ok';
// Stamped here (epoch ms): the bench places each report against its sessions' close.
const report = (message: QueueWorkerReport) => reportToParent({ ...message, at: Date.now() });
const store = redisSessionStore({
  url: process.env.REDIS_URL as string,
  keyPrefix: process.env.KEY_PREFIX ?? '',
});

const started = await startPreparationWorker({
  connection: process.env.REDIS_URL as string,
  store,
  name: process.env.QUEUE_NAME as string,
  concurrency: Number(process.env.CONCURRENCY ?? 1),
  ...(process.env.STALLED_MS ? { stalledIntervalMs: Number(process.env.STALLED_MS) } : {}),
  ...(process.env.LOCK_MS ? { lockDurationMs: Number(process.env.LOCK_MS) } : {}),
  ...(process.env.MAX_STALLED ? { maxStalledCount: Number(process.env.MAX_STALLED) } : {}),
  ...(process.env.TIMEOUT_MS ? { timeoutMs: Number(process.env.TIMEOUT_MS) } : {}),
  summarizer: {
    name: `scripted-${worker}`,
    summarize: async (request: SummarizeRequest) => {
      report({
        type: 'summarizing',
        worker,
        sessionId: request.sessionId,
        messages: request.messages.length,
      });
      if (mode === 'fail') throw new Error('the provider is down (scripted)');
      if (mode === 'hang') await new Promise(() => {});
      if (mode === 'gate') await new Promise((resolve) => process.once('message', resolve));
      await new Promise((resolve) => setTimeout(resolve, Number(process.env.SUMMARIZE_MS ?? 0)));
      const ids = request.messages.map((m) => m.id);
      return {
        text: `${request.keep ?? '## Task'}\n- by ${worker} ${previousMark(request.previousSummary)}: ${ids.length} messages, ${ids[0]} to ${ids.at(-1)}`,
      };
    },
  },
  onJobDone: (outcome) => report({ type: 'job', worker, outcome }),
});
started.on('*', (event: AnyCompactEvent) =>
  report({
    type: 'event',
    worker,
    name: event.name,
    sessionId: event.sessionId,
    ...(event.name === 'compact.warning' ? { code: event.properties.code } : {}),
    ...(event.name === 'compact.summary_created' ? { summarizer: event.properties.summarizer } : {}),
    ...(event.name === 'compact.error'
      ? { error: `${event.properties.errorType}: ${event.properties.message}` }
      : {}),
  }),
);
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'status') report({ type: 'status', worker, status: started.status() });
});
process.on('disconnect', () => {
  void started
    .close(true)
    .then(() => store.close())
    .finally(() => process.exit(0));
});
report({ type: 'ready', worker });

/**
 * The worker's close() at a stalled Redis (SIGSTOP: the server accepts and never answers): it
 * settles while the server is still stopped, after the job it was running finished, where it
 * waited until the server came back (forever, were it never to), so `agent-compaction worker`
 * did not stop on SIGTERM. At a healthy Redis, a job running at close() still finishes before
 * close() settles, however long past the bound its summarizer takes. Real redis-server of its
 * own (it is stopped), a worker in this process, jobs added as an agent adds them; and one
 * more that is stopped for good.
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import type { Summarizer } from '../../src/core/summary/summarizer.js';
import { bullmqPreparationQueue, startPreparationWorker } from '../../src/queue/index.js';
import { WORKER_CLOSE_TIMEOUT_MS } from '../../src/queue/worker-close.js';
import { startRedisServer } from '../support/redis-server.js';
import { oneMessageJob } from './support/one-message-job.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('worker close at a stalled Redis');

/** A summarizer that says when it starts and returns once `finish` resolves (noting 'summarized'). */
function summarizerUntil(finish: () => Promise<unknown>, order: string[]) {
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const summarizer: Summarizer = {
    name: 'gated',
    summarize: async () => {
      started();
      await finish();
      order.push('summarized');
      return { text: '## Task\n- a summary' };
    },
  };
  return { summarizer, running };
}

describe.runIf(redis.available)('the preparation worker closing', () => {
  it('lets a job running at close() finish first, however long it takes (Redis healthy)', {
    timeout: 60_000,
  }, async () => {
    const name = `q-${randomUUID()}`;
    const queue = bullmqPreparationQueue({ connection: redis.server.url, name });
    const order: string[] = [];
    // Longer than the close's bound for Redis: a bound on the whole close would cut it.
    const { summarizer, running } = summarizerUntil(() => sleep(WORKER_CLOSE_TIMEOUT_MS * 2), order);
    const worker = await startPreparationWorker({
      connection: redis.server.url,
      store: new MemorySessionStore(),
      name,
      summarizer,
    });
    try {
      await queue.enqueue(oneMessageJob('a'));
      await running;
      await worker.close().then(() => order.push('closed'));
      expect(order).toEqual(['summarized', 'closed']);
      expect(worker.status()).toMatchObject({ published: 1, running: 0 });
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  it('settles while the server is still stopped, after the job it was running', {
    timeout: 60_000,
  }, async () => {
    const name = `q-${randomUUID()}`;
    const queue = bullmqPreparationQueue({ connection: redis.server.url, name });
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { summarizer, running } = summarizerUntil(() => gate, order);
    const worker = await startPreparationWorker({
      connection: redis.server.url,
      store: new MemorySessionStore(),
      name,
      summarizer,
    });
    await queue.enqueue(oneMessageJob('a'));
    await running;
    process.kill(redis.server.pid, 'SIGSTOP');
    try {
      const closing = worker.close().then(() => order.push('closed'));
      release();
      // The server runs again only after close() settled (finally): before, close() never did.
      await closing;
      expect(order).toEqual(['summarized', 'closed']);
    } finally {
      process.kill(redis.server.pid, 'SIGCONT');
      await queue.close();
    }
  });

  it('settles once the server is gone (its connections waiting to reconnect)', {
    timeout: 60_000,
  }, async () => {
    const gone = await startRedisServer();
    const worker = await startPreparationWorker({
      connection: gone.url,
      store: new MemorySessionStore(),
      name: `q-${randomUUID()}`,
    });
    await gone.stop();
    // Before, close() waited for a server that never came back (and after the first fix here,
    // its promise was left unsettled once the worker's connections had nothing left to do).
    await expect(worker.close()).resolves.toBeUndefined();
  });
});

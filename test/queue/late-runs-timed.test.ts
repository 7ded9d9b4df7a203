/**
 * A worker whose runs all come too late to publish (the sessions compact while it summarizes:
 * a fleet in lockstep faster than the summarizer) still learns how long a run takes: a later
 * job whose deadline it cannot meet is dropped unsummarized (`expired`). It learned only from
 * published runs, so such a worker summarized every job for nothing. Real redis-server, a
 * worker in this process, jobs added as an agent adds them.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  bullmqPreparationQueue,
  type PreparationJobOutcome,
  startPreparationWorker,
} from '../../src/queue/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { oneMessageJob } from './support/one-message-job.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('late runs are timed');

describe.runIf(redis.available)('a worker whose runs come too late', () => {
  it('times them, and drops a later job it cannot finish by its deadline without a summarizer call', async () => {
    const name = `q-${randomUUID()}`;
    const keyPrefix = `late-test:${randomUUID()}:`;
    const store = redisSessionStore({ url: redis.server.url, keyPrefix });
    const queue = bullmqPreparationQueue({ connection: redis.server.url, name });
    const calls: string[] = [];
    const outcomes: PreparationJobOutcome[] = [];
    const done: (() => void)[] = [];
    let started!: () => void;
    const summarizing = new Promise<void>((resolve) => {
      started = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = await startPreparationWorker({
      connection: redis.server.url,
      store,
      name,
      summarizer: {
        name: 'gated',
        summarize: async (request) => {
          calls.push(request.sessionId);
          started();
          await gate;
          return { text: '## Task\n- a summary' };
        },
      },
      onJobDone: (outcome) => {
        outcomes.push(outcome);
        done.shift()?.();
      },
    });
    const jobDone = () => new Promise<void>((resolve) => done.push(resolve));
    try {
      // The session compacts while the worker summarizes: the run ends superseded, late.
      const first = jobDone();
      await queue.enqueue(oneMessageJob('a'));
      await summarizing;
      await store.set('a', { sessionId: 'a', version: 1, coveredIds: [], updatedAt: Date.now() });
      release();
      await first;
      expect(outcomes[0]).toMatchObject({ result: 'superseded', summarized: true });

      // A job whose deadline has passed: even the fastest run would be late.
      const second = jobDone();
      await queue.enqueue(oneMessageJob('b', Date.now() - 1));
      await second;
      expect(outcomes[1]).toMatchObject({ sessionId: 'b', result: 'expired', summarized: false });
      expect(calls).toEqual(['a']);
    } finally {
      await worker.close();
      await queue.close();
      await store.close();
    }
  });
});

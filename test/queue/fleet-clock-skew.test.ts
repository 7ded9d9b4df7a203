/**
 * A worker whose machine's clock runs apart from the agents': a job's deadline and due time
 * are the agent's times, which the worker compared with its own clock. A minute ahead, it
 * dropped a job due half a minute later as expired; a minute behind, it held a job due in
 * seconds for a minute (past its trigger). The times are on the Redis server's clock now
 * (fleet-clock.ts). Real redis-server, a real worker process whose `Date.now` is skewed.
 */

import { describe, expect, it } from 'vitest';
import { LeadTime } from '../../src/core/background/lead-time.js';
import { QueueBacklog } from '../../src/core/background/queue-backlog.js';
import { readPrepared } from '../../src/core/background/shared-preparation.js';
import type { SessionView } from '../../src/core/preflight/view/session-view.js';
import { SummaryMarks } from '../../src/core/summary/summary-mark.js';
import { type BullmqPreparationQueue, bullmqPreparationQueue } from '../../src/queue/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { oneMessageJob } from './support/one-message-job.js';
import type { WorkerFleet } from './support/queue-fleet.js';
import { type QueueScene, queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('a worker whose clock is skewed');
let queue: BullmqPreparationQueue | undefined;

/** A worker whose clock is `skewMs` off the agents', and a queue to add jobs as an agent does. */
async function skewedWorker(skewMs: number): Promise<QueueScene> {
  const scene = redis.scene('skew-test');
  const { fleet } = scene;
  await fleet.start('w1', { CLOCK_SKEW_MS: String(skewMs), SUMMARIZE_MS: String(SUMMARIZE_MS) });
  // A loaded machine's first add (the connection, bullmq's scripts) is not what this checks.
  queue = redis.closeAfter(
    bullmqPreparationQueue({ connection: redis.server.url, name: scene.queue, enqueueTimeoutMs: 30_000 }),
  );
  // A first job, without a deadline or due time, teaches the worker how long a run takes (it
  // checks deadlines and holds jobs only once it knows).
  await queue.enqueue(oneMessageJob('first'));
  await fleet.untilCount((r) => r.type === 'job', 1);
  return scene;
}

const SUMMARIZE_MS = 50;
const results = (workers: WorkerFleet) => workers.of('job').map((r) => r.outcome.result);

describe.runIf(redis.available)('a worker whose clock runs apart from the agents', () => {
  it('a minute ahead: a job whose deadline is half a minute away is published, not expired', async () => {
    const { fleet: workers } = await skewedWorker(60_000);
    await queue!.enqueue(oneMessageJob('ahead', Date.now() + 30_000));
    await workers.untilCount((r) => r.type === 'job', 2);
    expect(results(workers)).toEqual(['published', 'published']);
  });

  it('a minute behind: a job due in seconds runs by then, not a minute later', {
    timeout: 40_000,
  }, async () => {
    const { fleet: workers } = await skewedWorker(-60_000);
    await queue!.enqueue({ ...oneMessageJob('behind', Date.now() + 30_000), dueAt: Date.now() + 3_000 });
    // Before the fix the worker held it until its own clock reached the due time: a minute.
    await workers.untilCount((r) => r.type === 'job', 2);
    expect(results(workers)).toEqual(['published', 'published']);
  });
});

describe.runIf(redis.available)(
  'the queue latency an agent learns from a worker whose clock is behind',
  () => {
    it('is the time the job took (its summarizer at least), not the worker clock minus the agent one', async () => {
      const { fleet: workers, keyPrefix } = await skewedWorker(-60_000);
      const job = oneMessageJob('latency', Date.now() + 30_000);
      await queue!.enqueue(job);
      await workers.untilCount((r) => r.type === 'job', 2);
      expect(results(workers)).toEqual(['published', 'published']);
      // The agent's trigger reads the record, as background-preparation.ts does.
      const store = redisSessionStore({ url: redis.server.url, keyPrefix });
      const lead = new LeadTime();
      const observer = new QueueBacklog(lead, 'q').observer('latency', job.enqueuedAt);
      const view = { version: 0, mismatch: true } as unknown as SessionView;
      await readPrepared(store, 'latency', view, { marks: new SummaryMarks('k'.repeat(64)) }, observer.seen);
      observer.end();
      await store.close();
      // Before: the record's createdAt (a minute behind) minus the agent's enqueue: 0 ms.
      expect(lead.latencyMs()).toBeGreaterThanOrEqual(SUMMARIZE_MS);
    });
  },
);

/**
 * A worker whose machine's clock runs apart from the agents': a job's deadline and due time
 * are the agent's times, which the worker compared with its own clock. A minute ahead, it
 * dropped a job due half a minute later as expired; a minute behind, it held a job due in
 * seconds for a minute (past its trigger). The times are on the Redis server's clock now
 * (fleet-clock.ts). Real redis-server, a real worker process whose `Date.now` is skewed.
 */

import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BullmqPreparationQueue, bullmqPreparationQueue } from '../../src/queue/index.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { oneMessageJob } from './support/one-message-job.js';
import { WorkerFleet } from './support/queue-fleet.js';

const withRedis = redisAvailable('a worker whose clock is skewed');
let server: RedisTestServer;
let fleet: WorkerFleet | undefined;
let queue: BullmqPreparationQueue | undefined;

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  await fleet?.stop();
  await queue?.close();
  fleet = undefined;
  queue = undefined;
});

afterAll(async () => {
  await server?.stop();
});

/** A worker whose clock is `skewMs` off the agents', and a queue to add jobs as an agent does. */
async function skewedWorker(skewMs: number): Promise<WorkerFleet> {
  const name = `q-${randomUUID()}`;
  fleet = new WorkerFleet({
    REDIS_URL: server.url,
    KEY_PREFIX: `skew-test:${randomUUID()}:`,
    QUEUE_NAME: name,
  });
  await fleet.start('w1', { CLOCK_SKEW_MS: String(skewMs) });
  // A loaded machine's first add (the connection, bullmq's scripts) is not what this checks.
  queue = bullmqPreparationQueue({ connection: server.url, name, enqueueTimeoutMs: 30_000 });
  // A first job, without a deadline or due time, teaches the worker how long a run takes (it
  // checks deadlines and holds jobs only once it knows).
  await queue.enqueue(oneMessageJob('first'));
  await fleet.untilCount((r) => r.type === 'job', 1);
  return fleet;
}

const results = (workers: WorkerFleet) => workers.of('job').map((r) => r.outcome.result);

describe.runIf(withRedis)('a worker whose clock runs apart from the agents', () => {
  it('a minute ahead: a job whose deadline is half a minute away is published, not expired', async () => {
    const workers = await skewedWorker(60_000);
    await queue!.enqueue(oneMessageJob('ahead', Date.now() + 30_000));
    await workers.untilCount((r) => r.type === 'job', 2);
    expect(results(workers)).toEqual(['published', 'published']);
  });

  it('a minute behind: a job due in seconds runs by then, not a minute later', {
    timeout: 40_000,
  }, async () => {
    const workers = await skewedWorker(-60_000);
    await queue!.enqueue({ ...oneMessageJob('behind', Date.now() + 30_000), dueAt: Date.now() + 3_000 });
    // Before the fix the worker held it until its own clock reached the due time: a minute.
    await workers.untilCount((r) => r.type === 'job', 2);
    expect(results(workers)).toEqual(['published', 'published']);
  });
});

/**
 * The fleet's schedule hears a session's newer estimate of its trigger only when it moved
 * materially: a steady session's calls (estimates that move by a call's jitter) do not each
 * write to Redis; a session that speeds up does. Real redis-server, the agent's BullMQ queue; the
 * writes are counted by the server (INFO commandstats).
 */

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqPreparationQueue, type PreparationJob } from '../../src/queue/index.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('due time renewal tests');
let server: RedisTestServer;
/** Far enough that no worker would start the job during the test (there is none anyway). */
const LATER_MS = 600_000;

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** Scripts the server ran so far (the schedule's writes are Lua scripts). */
async function scriptCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

describe.runIf(withRedis)("the fleet's schedule: renewing a job's due time", () => {
  it('a steady session does not write at every call; an estimate that moves materially does', async () => {
    const name = `q-${randomUUID()}`;
    const queue = bullmqPreparationQueue({ connection: server.url, name });
    const redis = new Redis(server.url);
    try {
      const dueAt = Date.now() + LATER_MS;
      const job = {
        sessionId: 's',
        key: 's',
        baseVersion: 2,
        enqueuedAt: Date.now(),
        dueAt,
      } as unknown as PreparationJob;
      await queue.enqueue(job);
      const listed = () => redis.zscore(`bull:${name}:ac-due`, `prep-s-v2`).then(Number);
      expect(await listed()).toBe(dueAt);

      // Twenty calls of a steady session: each estimate within a second of the first.
      const before = await scriptCalls(redis);
      for (let call = 0; call < 20; call++)
        await queue.reschedule(job.key, 2, dueAt + ((call % 5) - 2) * 400);
      expect(await scriptCalls(redis)).toBe(before);
      expect(await listed()).toBe(dueAt);

      // The session sped up: its trigger a minute sooner is written, once.
      await queue.reschedule(job.key, 2, dueAt - 60_000);
      await queue.reschedule(job.key, 2, dueAt - 60_000 + 300);
      expect(await scriptCalls(redis)).toBe(before + 1);
      expect(await listed()).toBe(dueAt - 60_000);
    } finally {
      redis.disconnect();
      await queue.close();
    }
  });
});

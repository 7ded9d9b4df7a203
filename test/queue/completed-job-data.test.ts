/**
 * A completed job is kept an hour for its id alone (a later add of it is a no-op): it keeps
 * what names it, not the folded messages it summarized (46 KB of Redis a job for a 7,000-token
 * fold, for every session). A completed job picked again (its worker died before BullMQ
 * recorded the completion) is not summarized again. Real redis-server, a real worker process.
 */

import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { preparationJobId } from '../../src/queue/index.js';
import { chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { type Agent, settled, startAgent, WorkerFleet } from './support/queue-fleet.js';

const withRedis = redisAvailable('completed job data');
let server: RedisTestServer;
let fleet: WorkerFleet | undefined;
let agent: Agent | undefined;
let reader: Queue | undefined;
const history = chatTurns(200);
/** 36 turns: past prepareAtPct (7,000 of 10,000 tokens), under the trigger; 45: past the trigger. */
const CROSSED = history.slice(0, 72);
const TRIGGERED = history.slice(0, 90);

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  await fleet?.stop();
  await agent?.close();
  await reader?.close();
  fleet = undefined;
  agent = undefined;
  reader = undefined;
});

afterAll(async () => {
  await server?.stop();
});

describe.runIf(withRedis)('a completed job', () => {
  it('keeps its id and names, not its messages; picked again, it is not summarized again', async () => {
    const queue = `q-${randomUUID()}`;
    const keyPrefix = `completed-test:${randomUUID()}:`;
    fleet = new WorkerFleet({ REDIS_URL: server.url, KEY_PREFIX: keyPrefix, QUEUE_NAME: queue });
    agent = startAgent(server.url, keyPrefix, queue);
    await fleet.start('w1');
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await fleet.untilCount((r) => r.type === 'job', 1);
    const { hostname, port } = new URL(server.url);
    reader = new Queue(queue, { connection: { host: hostname, port: Number(port) } });
    const job = await reader.getJob(preparationJobId('s', 0));
    expect(await job?.getState()).toBe('completed');
    expect(job?.data).toMatchObject({
      key: 's',
      sessionId: 's',
      baseVersion: 0,
      messages: [],
      foldedIds: [],
    });

    // As if its worker had died before the completion was recorded: the job runs again.
    await job!.retry('completed');
    await fleet.untilCount((r) => r.type === 'job', 2);
    expect(fleet.of('job')[1]?.outcome).toMatchObject({ result: 'superseded', summarized: false });
    expect(fleet.of('summarizing'), 'one summarizer call').toHaveLength(1);
    // The summary published by the first run is the one the trigger uses.
    const result = await agent.manager.compact('s', TRIGGERED);
    expect(result.summary?.summarizer).toBe('queue:scripted-w1');
  });
});

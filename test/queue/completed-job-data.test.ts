/**
 * A completed job is kept an hour for its id alone (a later add of it is a no-op): it keeps
 * what names it, not the folded messages it summarized (46 KB of Redis a job for a 7,000-token
 * fold, for every session). A completed job picked again (its worker died before BullMQ
 * recorded the completion) is not summarized again. Real redis-server, a real worker process.
 */

import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { preparationJobId } from '../../src/queue/index.js';
import { crossedTurns, settled, triggeredTurns } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('completed job data');
const CROSSED = crossedTurns();
const TRIGGERED = triggeredTurns();

describe.runIf(redis.available)('a completed job', () => {
  it('keeps its id and names, not its messages; picked again, it is not summarized again', async () => {
    const scene = redis.scene('completed-test');
    const { queue, fleet } = scene;
    const agent = scene.agent();
    await fleet.start('w1');
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await fleet.untilCount((r) => r.type === 'job', 1);
    const { hostname, port } = new URL(redis.server.url);
    const reader = redis.closeAfter(new Queue(queue, { connection: { host: hostname, port: Number(port) } }));
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

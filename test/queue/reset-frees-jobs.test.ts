/**
 * A session reset, then reused by another conversation: the queue keeps a finished job's id
 * taken (a later add of it is a no-op), so without freeing them the new conversation got no job
 * for any version the old one reached (none of its summaries from the queue, each trigger
 * summarized by the agent). `reset` frees them, from any process. Real redis-server, a real
 * worker process (support/queue-worker.ts).
 */

import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { preparationJobId } from '../../src/queue/index.js';
import { crossedTurns as crossed, settled, triggeredTurns as triggered } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('reset frees the queue jobs');

describe.runIf(redis.available)('reset, then the session id reused', () => {
  it("the new conversation's jobs run and its trigger uses their summary", async () => {
    const scene = redis.scene('reset-test');
    const { queue, fleet } = scene;
    const agent = scene.agent();
    const admin = scene.agent();
    await fleet.start('w1');
    const published = (count: number) =>
      fleet.untilCount((r) => r.type === 'job' && r.outcome.result === 'published', count);

    await agent.manager.compact('s', crossed('old-'));
    await settled(agent);
    await published(1);
    // Reset by a process that never served the session (nor added a job); the one that served
    // it lets it go first (docs/sessions.md: reset on every process, or endSession first).
    agent.manager.endSession('s');
    await admin.manager.reset('s');
    const resetAt = Date.now();

    await agent.manager.compact('s', crossed('new-'));
    await settled(agent);
    await published(2);
    // The job of version 0 is the new conversation's: added after the reset (a completed job
    // keeps no messages, so its time tells it from the old one, whose id the add reused).
    const { hostname, port } = new URL(redis.server.url);
    const reader = redis.closeAfter(new Queue(queue, { connection: { host: hostname, port: Number(port) } }));
    const job = await reader.getJob(preparationJobId('s', 0));
    expect(job?.timestamp, 'the queue holds the new conversation’s job').toBeGreaterThanOrEqual(resetAt);
    const result = await agent.manager.compact('s', triggered('new-'));
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('queue:scripted-w1');
    expect(agent.calls, 'the agent summarized nothing').toEqual([]);
  });
});

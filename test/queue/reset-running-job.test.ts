/**
 * A session reset while a worker still runs the old conversation's base-0 job (review-81b,
 * 86e), then reused by a new conversation: the new conversation's own base-0 job got the same
 * id (`prep-<key>-v0`), so its add was a no-op while the old one ran or was kept, and the new
 * conversation got no summary from the queue. Its job now names what it folds (a job of
 * another fold under the id gets one of its own), its record stands beside the old one's, and
 * the reset withdraws the running job. Real redis-server, the real BullMQ queue, a real
 * worker process whose summarizer answers when told (support/queue-worker.ts, `gate`).
 */

import { describe, expect, it } from 'vitest';
import { until } from '../support/until.js';
import { crossedTurns as crossed, settled, triggeredTurns as triggered } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('reset while a job runs');

describe.runIf(redis.available)('reset while the old conversation’s job runs', () => {
  it("the new conversation's job runs and its trigger uses its summary", async () => {
    const scene = redis.scene('reset-running');
    const { fleet } = scene;
    const agent = scene.agent();
    const admin = scene.agent();
    const gated = await fleet.start('gated', { MODE: 'gate' });

    // The old conversation's job runs: its summarizer waits to be told.
    await agent.manager.compact('s', crossed('old-'));
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.worker === 'gated');
    // Reset by a process that never served the session (its job is not one it added); the one
    // that served it lets it go first (docs/sessions.md), without withdrawing its job.
    agent.manager.endSession('s');
    await admin.manager.reset('s');

    // The new conversation crosses its threshold while the old job still runs.
    await agent.manager.compact('s', crossed('new-'));
    await settled(agent);
    // Each run of the gated worker is told to answer once it summarizes (the old run, if the
    // reset's withdrawal did not cancel it yet, and the new one), until every job added has run.
    let released = 0;
    await until(async () => {
      const summarizing = fleet.of('summarizing').length;
      for (; released < summarizing; released++) gated.send({ type: 'release' });
      const counts = await agent.queue.counts();
      return counts.waiting + counts.active + counts.delayed === 0;
    }, 'the queue has run every job added');
    const result = await agent.manager.compact('s', triggered('new-'));
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer, 'the new conversation’s summary came from the queue').toBe(
      'queue:scripted-gated',
    );
    expect(agent.calls, 'the agent summarized nothing').toEqual([]);
  });
});

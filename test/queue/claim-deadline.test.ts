/**
 * A worker whose summarizer hangs holds the session's preparation claim; the agent at its
 * trigger waits for a claimed run's summary, but not past the job's deadline (when the agent
 * expects the trigger: a summary published later is of no use). Issue 46's fault bench saw a
 * trigger wait about 25 s for such a worker (the summarizer's whole time limit) before; the
 * claim now ends at the deadline and the trigger compacts itself. Real redis-server, a real
 * worker process whose summarizer never answers.
 */

import { describe, expect, it } from 'vitest';
import { chatTurns } from '../support/background-fixtures.js';
import { settled } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('preparation claim deadline test');
const history = chatTurns(200);

describe.runIf(redis.available)('the preparation claim of a hung run', () => {
  it('ends at the job deadline: the trigger compacts itself while the summarizer still hangs', async () => {
    const scene = redis.scene('claim-deadline');
    const { fleet } = scene;
    // A session at a pace of one call per millisecond (its clock): its job's deadline is a few
    // milliseconds after the enqueue. The agent would wait the summarizer's time limit (600 s)
    // for a run that holds the claim.
    let now = Date.now();
    const agent = scene.agent({
      clock: () => ++now,
      summarizerTimeoutMs: 600_000,
    });
    for (const turns of [30, 32, 34, 36]) {
      await agent.manager.compact('s', history.slice(0, 2 * turns));
      await settled(agent);
    }
    expect(agent.manager.backgroundStatus().queued).toBe(1);
    // A worker that has timed no run yet runs the job; its summarizer never answers, and the
    // run's time limit (600 s) does not end it either.
    await fleet.start('hung', { MODE: 'hang', TIMEOUT_MS: '600000' });
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.sessionId === 's');

    const result = await agent.manager.compact('s', history.slice(0, 90));
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('agent-summarizer');
    expect(agent.calls).toEqual(['s']);
    // The worker's summarizer never answered: its run published nothing (the agent's
    // withdrawal may have cancelled it by now: superseded).
    for (const job of fleet.of('job')) expect(job.outcome.result).toBe('superseded');
    expect(await agent.store.get('s::prepared')).toBeUndefined();
    expect((await agent.store.get('s'))?.summary?.summarizer).toBe('agent-summarizer');
  });
});

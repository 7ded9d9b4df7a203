/**
 * A job its agent withdraws while a worker runs it (the conversation closed,
 * `endSession(id, { closed: true })`) is cancelled in that worker: its summarizer call is
 * aborted (the worker's summarizer here never answers by itself), the run ends `superseded`
 * with `cancelled`, is not retried and publishes nothing. Real redis-server, a real worker
 * process (support/queue-worker.ts).
 */

import { describe, expect, it } from 'vitest';
import type { PreparationQueue } from '../../src/core/queues/preparation-queue.js';
import { bullmqPreparationQueue } from '../../src/queue/index.js';
import { crossedTurns, settled } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('withdrawal of a running job');
const CROSSED = crossedTurns();

describe.runIf(redis.available)('a running job withdrawn by its agent', () => {
  it('the session closes mid-run: the summarizer call is aborted, nothing is published or retried', async () => {
    const scene = redis.scene('withdraw-test');
    const { fleet } = scene;
    const agent = scene.agent();
    // Its summarizer answers only when told (never here): only a cancellation ends the run.
    await fleet.start('gated', { MODE: 'gate' });
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.sessionId === 's');
    agent.manager.endSession('s', { closed: true });
    await fleet.inbox.until((r) => r.type === 'job');
    const [run] = fleet.of('job');
    expect(run?.outcome).toMatchObject({
      result: 'superseded',
      cancelled: true,
      summarized: true,
      attempt: 1,
    });
    expect(await fleet.status('gated')).toMatchObject({
      cancelled: 1,
      superseded: 1,
      failed: 0,
      published: 0,
    });
    expect(await agent.store.get('s::prepared')).toBeUndefined();
    // Not retried: one summarizer call in all.
    expect(fleet.of('summarizing')).toHaveLength(1);
    expect(await agent.queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0, failed: 0 });
  });

  it('a session closed by an agent that never prepared it: the job another agent enqueued is withdrawn too', async () => {
    const scene = redis.scene('withdraw-test');
    // No worker: the job waits in the queue.
    const agent = scene.agent();
    // Its preparations start later (84% of the window): at this size it enqueues none itself.
    const other = scene.agent({
      policy: { hardCapBuffer: 500, prepareAtPct: 0.84 },
    });
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    expect(await agent.queue.counts()).toMatchObject({ waiting: 1 });
    // The next call goes to the other agent (a load balancer), and the conversation closes there.
    await other.manager.compact('s', CROSSED);
    await settled(other);
    expect(other.manager.backgroundStatus().queued).toBe(0);
    // Its queue is open (as in a fleet where it enqueued other sessions' jobs before).
    await other.queue.counts();
    other.manager.endSession('s', { closed: true });
    // The withdrawal is never awaited by the agent: the job leaves the queue once it lands.
    while ((await other.queue.counts()).waiting > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await other.queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
  });

  it("a session closed while another agent's add is still on the way: the job lands withdrawn and runs no summarizer", async () => {
    const scene = redis.scene('withdraw-test');
    const { fleet } = scene;
    // The agent that enqueues: its add is held back until the close is done (a slow add under load).
    const inner = redis.closeAfter(
      bullmqPreparationQueue({ connection: redis.server.url, name: scene.queue, attempts: 3, backoffMs: 50 }),
    );
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The add's promise is passed in a box: resolving with it would wait for it.
    let decided: (add: { added: Promise<void> }) => void = () => {};
    const adding = new Promise<{ added: Promise<void> }>((resolve) => {
      decided = resolve;
    });
    const slow: PreparationQueue = {
      ...inner,
      enqueue: (job) => {
        const added = gate.then(() => inner.enqueue(job));
        decided({ added });
        return added;
      },
    };
    const agent = scene.agent({ preparationQueue: slow });
    const call = agent.manager.compact('s', CROSSED);
    const { added } = await adding;
    // The next call goes to the other agent, which enqueues nothing itself, and the
    // conversation closes there: its withdrawal (what endSession(closed) calls) finds no job yet.
    const other = scene.agent({ policy: { hardCapBuffer: 500, prepareAtPct: 0.84 } });
    await other.manager.compact('s', CROSSED);
    await settled(other);
    // Its queue is open (as in a fleet where it enqueued other sessions' jobs before).
    await other.queue.counts();
    await other.queue.withdraw('s', 0);
    // The add lands after the close; a worker picks the job.
    release();
    await added;
    await call;
    expect(await inner.counts()).toMatchObject({ waiting: 1 });
    await fleet.start('ok');
    await fleet.inbox.until((r) => r.type === 'job');
    const [run] = fleet.of('job');
    expect(run?.outcome).toMatchObject({ result: 'superseded', summarized: false });
    expect(fleet.of('summarizing')).toHaveLength(0);
    expect(await agent.store.get('s::prepared')).toBeUndefined();
  });
});

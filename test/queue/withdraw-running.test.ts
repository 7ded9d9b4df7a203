/**
 * A job its agent withdraws while a worker runs it (the conversation closed,
 * `endSession(id, { closed: true })`) is cancelled in that worker: its summarizer call is
 * aborted (the worker's summarizer here never answers by itself), the run ends `superseded`
 * with `cancelled`, is not retried and publishes nothing. Real redis-server, a real worker
 * process (support/queue-worker.ts).
 */

import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { type Agent, settled, startAgent, WorkerFleet } from './support/queue-fleet.js';

const withRedis = redisAvailable('withdrawal of a running job');
let server: RedisTestServer;
let fleet: WorkerFleet | undefined;
let agent: Agent | undefined;
let other: Agent | undefined;
/** 36 turns: past prepareAtPct (7,000 of 10,000 tokens), under the trigger. */
const CROSSED = chatTurns(200).slice(0, 72);

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  await fleet?.stop();
  await agent?.close();
  await other?.close();
  fleet = undefined;
  agent = undefined;
  other = undefined;
});

afterAll(async () => {
  await server?.stop();
});

describe.runIf(withRedis)('a running job withdrawn by its agent', () => {
  it('the session closes mid-run: the summarizer call is aborted, nothing is published or retried', async () => {
    const queue = `q-${randomUUID()}`;
    const keyPrefix = `withdraw-test:${randomUUID()}:`;
    fleet = new WorkerFleet({ REDIS_URL: server.url, KEY_PREFIX: keyPrefix, QUEUE_NAME: queue });
    agent = startAgent(server.url, keyPrefix, queue);
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
    const queue = `q-${randomUUID()}`;
    const keyPrefix = `withdraw-test:${randomUUID()}:`;
    // No worker: the job waits in the queue.
    agent = startAgent(server.url, keyPrefix, queue);
    // Its preparations start later (84% of the window): at this size it enqueues none itself.
    other = startAgent(server.url, keyPrefix, queue, {
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
});

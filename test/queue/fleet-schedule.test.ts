/**
 * Issue 46, the fleet's schedule by expected trigger: a worker holds a job whose session is not
 * due yet (its `dueAt`) and runs the jobs due sooner first, so a job of a conversation that
 * closes before its trigger is withdrawn while held and never summarized. Real redis-server,
 * real BullMQ, a worker process (support/queue-worker.ts); every wait is for a report.
 */

import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PreparationJob } from '../../src/queue/index.js';
import { chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { type Agent, settled, startAgent, WorkerFleet } from './support/queue-fleet.js';

const withRedis = redisAvailable('fleet schedule tests');
let server: RedisTestServer;
/** 36 turns: past prepareAtPct (7,000 of 10,000 tokens), under the trigger. */
const CROSSED = chatTurns(200).slice(0, 72);
const open: { fleets: WorkerFleet[]; agents: Agent[] } = { fleets: [], agents: [] };

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterEach(async () => {
  await Promise.all(open.fleets.map((fleet) => fleet.stop()));
  await Promise.all(open.agents.map((agent) => agent.close()));
  open.fleets = [];
  open.agents = [];
});

afterAll(async () => {
  await server?.stop();
});

/**
 * A worker of one slot and an agent on their own queue, the worker's run time learned from a
 * first job (no `dueAt`: run when picked); resolves with that job, to copy for other sessions.
 */
async function warmFleet(): Promise<{ fleet: WorkerFleet; agent: Agent; job: PreparationJob }> {
  const queue = `q-${randomUUID()}`;
  const keyPrefix = `schedule-test:${randomUUID()}:`;
  const fleet = new WorkerFleet({ REDIS_URL: server.url, KEY_PREFIX: keyPrefix, QUEUE_NAME: queue });
  const agent = startAgent(server.url, keyPrefix, queue);
  open.fleets.push(fleet);
  open.agents.push(agent);
  const enqueue = agent.queue.enqueue.bind(agent.queue);
  let job: PreparationJob | undefined;
  agent.queue.enqueue = async (added) => {
    job ??= added;
    await enqueue(added);
  };
  await fleet.start('w1', { CONCURRENCY: '1' });
  await agent.manager.compact('warm', CROSSED);
  await settled(agent);
  await fleet.inbox.until(
    (r) => r.type === 'job' && r.outcome.sessionId === 'warm' && r.outcome.result === 'published',
  );
  agent.queue.enqueue = enqueue;
  expect(job?.dueAt).toBeUndefined();
  return { fleet, agent, job: job! };
}

/** `job` for another session, due at `dueAt` (no deadline: only the schedule decides). */
function jobOf(job: PreparationJob, session: string, dueAt: number): PreparationJob {
  const { deadline: _deadline, ...rest } = job;
  return { ...rest, key: session, sessionId: session, dueAt };
}

describe.runIf(withRedis)("the fleet's schedule by expected trigger", () => {
  it('a job not due yet is held while a job due sooner runs, and a closed session withdraws it unsummarized', async () => {
    const { fleet, agent, job } = await warmFleet();
    // Enqueued first, due in a minute: FIFO would run it first on the worker's one slot.
    await agent.queue.enqueue(jobOf(job, 'later', Date.now() + 60_000));
    await agent.queue.enqueue(jobOf(job, 'sooner', Date.now()));
    await fleet.inbox.until(
      (r) => r.type === 'job' && r.outcome.sessionId === 'sooner' && r.outcome.result === 'published',
    );
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['warm', 'sooner']);
    expect((await agent.queue.counts()).delayed).toBe(1);
    expect((await fleet.status('w1')).held).toBeGreaterThanOrEqual(1);
    // The conversation closes before its trigger: the held job is taken back, never summarized.
    await agent.queue.withdraw('later', job.baseVersion);
    expect((await agent.queue.counts()).delayed).toBe(0);
    await agent.queue.enqueue(jobOf(job, 'after', Date.now()));
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'after');
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['warm', 'sooner', 'after']);
    expect(fleet.of('job').some((r) => r.outcome.sessionId === 'later')).toBe(false);
  });

  it('a held job still runs by its due time; its record tells how long it was held', async () => {
    const { fleet, agent, job } = await warmFleet();
    await agent.queue.enqueue(jobOf(job, 'held', Date.now() + 10_000));
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'held');
    expect(fleet.of('job').find((r) => r.outcome.sessionId === 'held')?.outcome.result).toBe('published');
    expect((await fleet.status('w1')).held).toBeGreaterThanOrEqual(1);
    const record = await agent.store.get('held::prepared');
    expect(record?.version).toBe(job.baseVersion + 1);
    // The record tells the hold: the agents' learned queue latency leaves it out.
    expect(record?.heldMs).toBeGreaterThan(0);
  });
});

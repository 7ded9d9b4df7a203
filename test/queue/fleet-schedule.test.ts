/**
 * Issue 46, the fleet's schedule by expected trigger: a worker holds a job whose session is not
 * due yet (its `dueAt`) and runs the jobs due sooner first, so a job of a conversation that
 * closes before its trigger is withdrawn while held and never summarized. Real redis-server,
 * real BullMQ, a worker process (support/queue-worker.ts); every wait is for a report.
 */

import { randomUUID } from 'node:crypto';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { QUEUE_METRICS, queueMetrics } from '../../src/exporters/otel/index.js';
import type { PreparationJob } from '../../src/queue/index.js';
import { cli } from '../support/cli-fixtures.js';
import { type Agent, crossedTurns, settled, type WorkerFleet } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('fleet schedule tests');
const CROSSED = crossedTurns();

/**
 * A worker of one slot and an agent on their own queue, the worker's run time learned from a
 * first job (no `dueAt`: run when picked); resolves with that job, to copy for other sessions.
 */
async function warmFleet(
  keyPrefix?: string,
): Promise<{ fleet: WorkerFleet; agent: Agent; job: PreparationJob }> {
  const scene = redis.scene('schedule-test', keyPrefix);
  const { fleet } = scene;
  const agent = scene.agent();
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

/** A due time no run of these tests reaches, however slow the machine. */
const LATER_MS = 600_000;

/**
 * `read` again until `ok`: a held job comes back from BullMQ's delayed set at each recheck
 * (every second) for the moment a worker takes to hold it again.
 */
async function readUntil<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The queue's metrics at one collection: each instrument's points. */
async function collectQueueMetrics(agent: Agent) {
  const reader = new (class extends MetricReader {
    protected async onForceFlush() {}
    protected async onShutdown() {}
  })();
  const provider = new MeterProvider({ readers: [reader] });
  const stop = await queueMetrics(agent.queue, { meter: provider.getMeter('test') });
  const { resourceMetrics } = await reader.collect();
  stop();
  await provider.shutdown();
  const points = Object.fromEntries(
    resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .map((metric) => [metric.descriptor.name, metric.dataPoints]),
  );
  return (name: string, state?: string) =>
    points[name]?.find((p) => state === undefined || p.attributes.state === state)?.value as
      | number
      | undefined;
}

describe.runIf(redis.available)("the fleet's schedule by expected trigger", () => {
  it('a job not due yet is held while a job due sooner runs, and a closed session withdraws it unsummarized', async () => {
    const { fleet, agent, job } = await warmFleet();
    // Enqueued first, due in ten minutes (far past any slow machine's run of this test): FIFO
    // would run it first on the worker's one slot.
    await agent.queue.enqueue(jobOf(job, 'later', Date.now() + LATER_MS));
    await agent.queue.enqueue(jobOf(job, 'sooner', Date.now()));
    await fleet.inbox.until(
      (r) => r.type === 'job' && r.outcome.sessionId === 'sooner' && r.outcome.result === 'published',
    );
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['warm', 'sooner']);
    // A held job leaves BullMQ's delayed set for a moment at each recheck: read it settled.
    await readUntil(
      () => agent.queue.counts(),
      (c) => c.delayed === 1,
    );
    expect((await fleet.status('w1')).held).toBeGreaterThanOrEqual(1);
    // The conversation closes before its trigger: the held job is taken back, never summarized
    // (again if the withdrawal met it in a worker's hands, being held again).
    const after = await readUntil(
      async () => {
        await agent.queue.withdraw('later', job.baseVersion);
        return agent.queue.counts();
      },
      (c) => c.delayed + c.waiting + c.active === 0,
    );
    expect(after.delayed).toBe(0);
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
    // The job names its branch (an agent's job): its record is among the session's branch records.
    const record = (await agent.store.get('held::prepared-forks'))?.branches?.[0];
    expect(record?.version).toBe(job.baseVersion + 1);
    // The record tells the hold: the agents' learned queue latency leaves it out.
    expect(record?.heldMs).toBeGreaterThan(0);
  });

  it('held jobs show fleet-wide in counts(), as OpenTelemetry metrics and in status --store redis', async () => {
    // The store's default key prefix: the one the CLI reads, with a session to show.
    const { fleet, agent, job } = await warmFleet('agent-compaction:session:');
    const session = `status-${randomUUID()}`;
    await agent.store.set(session, { sessionId: session, version: 0, coveredIds: [], updatedAt: Date.now() });
    const laterDue = Date.now() + LATER_MS;
    await agent.queue.enqueue(jobOf(job, 'later', laterDue));
    await agent.queue.enqueue(jobOf(job, 'sooner', Date.now()));
    await fleet.inbox.until(
      (r) => r.type === 'job' && r.outcome.sessionId === 'sooner' && r.outcome.result === 'published',
    );
    const counts = await readUntil(
      () => agent.queue.counts(),
      (c) => c.delayed === 1,
    );
    expect(counts).toMatchObject({ waiting: 0, delayed: 1, held: 1, nextDueAt: laterDue, failed: 0 });

    const point = await readUntil(
      () => collectQueueMetrics(agent),
      (p) => p(QUEUE_METRICS.jobs, 'delayed') === 1,
    );
    expect(point(QUEUE_METRICS.held)).toBe(1);
    expect(point(QUEUE_METRICS.nextDue)).toBeGreaterThan(0);
    expect(point(QUEUE_METRICS.nextDue)).toBeLessThanOrEqual(LATER_MS);

    const status = (json: boolean) =>
      cli(
        ['status', session, '--store', 'redis', '--queue', agent.queue.name, ...(json ? ['--json'] : [])],
        '',
        {
          REDIS_URL: redis.server.url,
        },
      );
    const run = await readUntil(
      () => status(false),
      (r) => r.code !== 0 || !/active 1|waiting 1/.test(r.stdout),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^preparation queue ${agent.queue.name}: waiting 0, active 0, held by the schedule 1, delayed \\(retries\\) 0, failed \\(dead letters\\) 0; lag 0 ms \\(the oldest waiting job\\); the next held job due in [1-9][\\d,]* ms \\(${new Date(laterDue).toISOString().replace(/\./g, '\\.')}\\)$`,
        'm',
      ),
    );
    const json = await readUntil(
      async () => JSON.parse((await status(true)).stdout),
      (j) => j.queue.delayed === 1,
    );
    expect(json.queue).toMatchObject({ delayed: 1, held: 1, nextDueAt: laterDue });

    // Withdrawn while held: nothing held, no next due time.
    // (a withdrawal leaves a job a worker is holding again at that moment: then once more).
    const after = await readUntil(
      async () => {
        await agent.queue.withdraw('later', job.baseVersion);
        return agent.queue.counts();
      },
      (c) => c.delayed + c.waiting + c.active === 0,
    );
    expect(after).toMatchObject({ delayed: 0, held: 0 });
    expect(after.nextDueAt).toBeUndefined();
    const none = await collectQueueMetrics(agent);
    expect(none(QUEUE_METRICS.held)).toBe(0);
    expect(none(QUEUE_METRICS.nextDue)).toBeUndefined();
  });
});

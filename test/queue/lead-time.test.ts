/**
 * Issue 46, keeping up: preparations start a learned lead time ahead of the trigger (a slower
 * queue starts them earlier), a queue whose workers are stopped gets one backlog warning per
 * episode, no worker runs a job of a version the session has passed, and the queue's jobs and
 * lag show as OpenTelemetry metrics and in `status --store redis`. Real redis-server, real
 * BullMQ, worker processes (support/queue-worker.ts); every wait is for an event or a report.
 */

import { randomUUID } from 'node:crypto';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { BACKLOG_AFTER } from '../../src/core/background/queue-backlog.js';
import type { CompactEvent } from '../../src/core/events/events.js';
import { QUEUE_METRICS, queueMetrics } from '../../src/exporters/otel/index.js';
import { chatTurns } from '../support/background-fixtures.js';
import { cli } from '../support/cli-fixtures.js';
import { type Agent, settled, type WorkerFleet } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('queue lead time tests');
const history = chatTurns(400);

/** A clock that moves 500 ms per call of the agent (time per call), plus the real time. */
function stepClock(): { now: () => number; step: () => void } {
  let offset = 0;
  return { now: () => Date.now() + offset, step: () => (offset += 500) };
}

/** A fleet and one agent on their own queue and key prefix (`''`: none). */
function setup(keyPrefix?: string, clock?: () => number) {
  const scene = redis.scene('lead-test', keyPrefix);
  return { fleet: scene.fleet, agent: scene.agent(clock ? { clock } : {}) };
}

/**
 * Steps session `s` one turn per call until `done`; with `awaitJobs`, each job enqueued is
 * awaited until a worker ran it (so the agent learns how long the queue takes).
 */
async function drive(
  agent: Agent,
  session: string,
  done: () => boolean,
  options: { fleet?: WorkerFleet; clock?: { step: () => void } } = {},
): Promise<void> {
  for (let turn = 1; turn <= history.length / 2 && !done(); turn++) {
    options.clock?.step();
    const queued = agent.manager.backgroundStatus().queued;
    const result = await agent.manager.compact(session, history.slice(0, 2 * turn));
    await settled(agent);
    if (options.fleet && agent.manager.backgroundStatus().queued > queued)
      await options.fleet.inbox.until(
        (r) =>
          r.type === 'job' && r.outcome.sessionId === session && r.outcome.baseVersion === result.version,
      );
  }
}

describe.runIf(redis.available)('the learned lead time of queued preparations', () => {
  it('a slower queue makes preparations start earlier (the decided threshold)', async () => {
    const decided = async (summarizeMs: string) => {
      const clock = stepClock();
      const { fleet, agent } = setup(undefined, clock.now);
      await fleet.start('w', { SUMMARIZE_MS: summarizeMs });
      // Two preparations: the first at prepareAtPct (nothing learned), the second learned.
      await drive(agent, 's', () => agent.manager.backgroundStatus().started >= 2, { fleet, clock });
      const status = agent.manager.backgroundStatus();
      expect(status.used, 'the first preparation was used at its trigger').toBe(1);
      return status;
    };
    const fast = await decided('0');
    const slow = await decided('4000');
    expect(slow.queueLatencyMs).toBeGreaterThanOrEqual(4000);
    expect(slow.queueLatencyMs).toBeGreaterThan(fast.queueLatencyMs!);
    expect(fast.lastThreshold?.basis).toBe('learned');
    expect(slow.lastThreshold?.basis).toBe('learned');
    expect(slow.lastThreshold!.callsAhead).toBeGreaterThan(fast.lastThreshold!.callsAhead!);
    expect(slow.lastThreshold!.tokens).toBeLessThan(fast.lastThreshold!.tokens);
  });

  it('a session that would reach its trigger before the queue could answer enqueues no job', async () => {
    const clock = stepClock();
    const { fleet, agent } = setup(undefined, clock.now);
    await fleet.start('w', { SUMMARIZE_MS: '4000' });
    await drive(agent, 's', () => agent.manager.backgroundStatus().used >= 1, { fleet, clock });
    const queued = agent.manager.backgroundStatus().queued;
    // Another session: under prepareAtPct (6,000 tokens), then one call short of its trigger (8,400 of 8,500).
    clock.step();
    await agent.manager.compact('jump', history.slice(0, 60));
    clock.step();
    await agent.manager.compact('jump', history.slice(0, 84));
    await settled(agent);
    const status = agent.manager.backgroundStatus();
    expect(status.tooLate).toBe(1);
    expect(status.queued).toBe(queued);
    expect((await agent.queue.counts()).waiting).toBe(0);
  });

  it('workers stopped: one backlog warning per episode, the lag and jobs as metrics, no job of a passed version run once workers are back', async () => {
    const { fleet, agent } = setup();
    const warnings: CompactEvent<'compact.warning'>[] = [];
    agent.manager.on('compact.warning', (event) => warnings.push(event));
    // No worker: every job is late at its trigger; the agent compacts itself (and withdraws
    // the job), until the job of the current version waits.
    await drive(agent, 's', () => {
      const status = agent.manager.backgroundStatus();
      return status.late >= BACKLOG_AFTER + 2 && status.queued > status.late;
    });
    const backlog = warnings.filter((w) => w.properties.code === 'preparation_backlog');
    expect(backlog).toHaveLength(1);
    expect(backlog[0]!.properties.context).toMatchObject({ queue: agent.queue.name, late: BACKLOG_AFTER });
    const status = agent.manager.backgroundStatus();
    expect(status).toMatchObject({ backlog: true, backlogEpisodes: 1 });
    const versions = (await agent.manager.state('s'))!.version;
    expect(versions).toBeGreaterThanOrEqual(BACKLOG_AFTER + 2);
    // The late jobs were withdrawn at their triggers (not awaited there): one job waits.
    let counts = await agent.queue.counts();
    while (counts.waiting > 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      counts = await agent.queue.counts();
    }
    expect(counts.waiting).toBe(1);
    expect(counts.lagMs).toBeGreaterThan(0);

    // The queue as OpenTelemetry metrics, read at a collection.
    const reader = new (class extends MetricReader {
      protected async onForceFlush() {}
      protected async onShutdown() {}
    })();
    const provider = new MeterProvider({ readers: [reader] });
    const stop = await queueMetrics(agent.queue, {
      meter: provider.getMeter('test'),
      manager: agent.manager,
    });
    const { resourceMetrics } = await reader.collect();
    const points = Object.fromEntries(
      resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .map((metric) => [metric.descriptor.name, metric.dataPoints]),
    );
    const point = (name: string, state?: string) =>
      points[name]?.find((p) => state === undefined || p.attributes.state === state)?.value;
    expect(point(QUEUE_METRICS.jobs, 'waiting')).toBe(counts.waiting);
    expect(point(QUEUE_METRICS.jobs, 'active')).toBe(0);
    expect(point(QUEUE_METRICS.jobs, 'failed')).toBe(0);
    expect(point(QUEUE_METRICS.lag)).toBeGreaterThan(0);
    // Nothing held without workers (the schedule holds at a pick): no next due time either.
    expect(point(QUEUE_METRICS.held)).toBe(0);
    expect(point(QUEUE_METRICS.nextDue)).toBeUndefined();
    expect(point(QUEUE_METRICS.late)).toBe(status.late);
    expect(point(QUEUE_METRICS.backlog)).toBe(1);
    expect(point(QUEUE_METRICS.latency)).toBeGreaterThan(0);
    expect(points[QUEUE_METRICS.lag]?.[0]?.attributes).toEqual({
      'messaging.destination.name': agent.queue.name,
    });
    stop();
    await provider.shutdown();

    // Workers back: no job of a version the session has passed is left to run; the current one is.
    await fleet.start('w1');
    await fleet.untilCount((r) => r.type === 'job', 1);
    const current = (await agent.manager.state('s'))!.version;
    expect(fleet.of('job').map((r) => [r.outcome.baseVersion, r.outcome.result])).toEqual([
      [current, 'published'],
    ]);
    expect(fleet.of('summarizing')).toHaveLength(1);
    expect(await agent.queue.counts()).toMatchObject({ waiting: 0, active: 0, failed: 0 });
  });

  it('status --store redis shows the queue: waiting, active, held, failed and the lag', async () => {
    // The store's default key prefix: the one the CLI reads.
    const { agent } = setup('agent-compaction:session:');
    const session = `status-${randomUUID()}`;
    // No worker: one job late at the trigger (withdrawn there), the next version's waiting.
    await drive(agent, session, () => {
      const status = agent.manager.backgroundStatus();
      return status.late >= 1 && status.queued > status.late;
    });
    while ((await agent.queue.counts()).waiting > 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const run = await cli(['status', session, '--store', 'redis', '--queue', agent.queue.name], '', {
      REDIS_URL: redis.server.url,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^preparation queue ${agent.queue.name}: waiting 1, active 0, held by the schedule 0, delayed \\(retries\\) 0, failed \\(dead letters\\) 0; lag [1-9][\\d,]* ms \\(the oldest waiting job\\)$`,
        'm',
      ),
    );
    const json = JSON.parse(
      (
        await cli(['status', session, '--store', 'redis', '--queue', agent.queue.name, '--json'], '', {
          REDIS_URL: redis.server.url,
        })
      ).stdout,
    );
    expect(json.queue).toMatchObject({ name: agent.queue.name, waiting: 1, active: 0, held: 0, failed: 0 });
    expect(json.queue.lagMs).toBeGreaterThan(0);
  });
});

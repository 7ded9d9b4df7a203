import type { Attributes, BatchObservableResult, Meter, Observable } from '@opentelemetry/api';
import { loadApi, type OtelApi, TRACER_NAME } from './otel-api.js';

/** The job counts of a preparation queue (`agent-compaction/queue`'s `counts()`). */
export interface QueueCountsSource {
  readonly name: string;
  counts(): Promise<{
    waiting: number;
    active: number;
    delayed: number;
    failed: number;
    lagMs: number;
    /** Delayed jobs the fleet's schedule holds until their start. */
    held?: number;
    /** The earliest due time (epoch ms) of a held job. */
    nextDueAt?: number;
  }>;
}

/** What a manager learned about its queue (`manager.backgroundStatus()`). */
export interface QueueLatencySource {
  backgroundStatus(): {
    queueLatencyMs: number | undefined;
    leadTimeMs: number | undefined;
    late: number;
    backlog: boolean;
  };
}

/** Options of {@link queueMetrics}. */
export interface QueueMetricsOptions {
  /** The meter the instruments are made with. @default api.metrics.getMeter('agent-compaction') */
  meter?: Meter;
  /** The `@opentelemetry/api` module. @default await import('@opentelemetry/api') */
  api?: OtelApi;
  /** A manager whose learned latency, late jobs and backlog state are reported as well. */
  manager?: QueueLatencySource;
}

/** The instruments' names. */
export const QUEUE_METRICS = {
  /** Jobs of the queue by `state` (`waiting`, `active`, `delayed`, `failed`): a gauge. */
  jobs: 'agent_compaction.queue.jobs',
  /** How long the oldest waiting job has waited, in milliseconds: a gauge. */
  lag: 'agent_compaction.queue.lag',
  /** Delayed jobs the fleet's schedule holds until their start (a part of `delayed`): a gauge. */
  held: 'agent_compaction.queue.held',
  /** Milliseconds until the earliest held job is due (its session's expected trigger): a gauge, only while one is held. */
  nextDue: 'agent_compaction.queue.next_due',
  /** The manager's p90 of enqueue to published, in milliseconds: a gauge. */
  latency: 'agent_compaction.queue.latency',
  /** The lead time the manager's preparations start for, in milliseconds: a gauge. */
  leadTime: 'agent_compaction.queue.lead_time',
  /** Jobs the manager found not yet published at their session's trigger: a counter. */
  late: 'agent_compaction.queue.late',
  /** 1 while the manager sees a backlog (its `preparation_backlog` episode), else 0: a gauge. */
  backlog: 'agent_compaction.queue.backlog',
} as const;

/**
 * Reports a preparation queue as OpenTelemetry metrics, read at each collection: jobs waiting,
 * active, delayed and failed (dead letters), the lag of the oldest waiting job, the delayed
 * jobs the fleet's schedule holds and the time until the earliest of them is due, and with
 * `manager` what it learned (latency, lead time, late jobs, backlog). Every point carries the
 * queue's name as `messaging.destination.name`. A failing read skips that collection. Resolves
 * with a function that stops the reporting.
 *
 * @example
 * ```ts
 * import { queueMetrics } from 'agent-compaction/otel';
 * const stop = await queueMetrics(queue, { manager });
 * ```
 */
export async function queueMetrics(
  queue: QueueCountsSource,
  options: QueueMetricsOptions = {},
): Promise<() => void> {
  const api = await loadApi(options.api);
  const meter = options.meter ?? api.metrics.getMeter(TRACER_NAME);
  const where: Attributes = { 'messaging.destination.name': queue.name };
  const jobs = meter.createObservableGauge(QUEUE_METRICS.jobs, {
    description: 'Jobs of the summary preparation queue, by state',
    unit: '{job}',
  });
  const lag = meter.createObservableGauge(QUEUE_METRICS.lag, {
    description: 'How long the oldest waiting preparation job has waited',
    unit: 'ms',
  });
  const held = meter.createObservableGauge(QUEUE_METRICS.held, {
    description: "Delayed preparation jobs the fleet's schedule holds until their start",
    unit: '{job}',
  });
  const nextDue = meter.createObservableGauge(QUEUE_METRICS.nextDue, {
    description: 'Time until the earliest held preparation job is due',
    unit: 'ms',
  });
  const observables: Observable[] = [jobs, lag, held, nextDue];
  const manager = options.manager;
  const learned = manager
    ? {
        latency: meter.createObservableGauge(QUEUE_METRICS.latency, {
          description: "p90 of the manager's preparation latency (enqueue to published)",
          unit: 'ms',
        }),
        leadTime: meter.createObservableGauge(QUEUE_METRICS.leadTime, {
          description: "The lead time the manager's preparations start for",
          unit: 'ms',
        }),
        late: meter.createObservableCounter(QUEUE_METRICS.late, {
          description: 'Preparation jobs not published by their session trigger',
          unit: '{job}',
        }),
        backlog: meter.createObservableGauge(QUEUE_METRICS.backlog, {
          description: '1 while the preparation queue falls behind',
        }),
      }
    : undefined;
  if (learned) observables.push(learned.latency, learned.leadTime, learned.late, learned.backlog);
  const callback = async (result: BatchObservableResult) => {
    if (manager && learned) {
      const status = manager.backgroundStatus();
      if (status.queueLatencyMs !== undefined) result.observe(learned.latency, status.queueLatencyMs, where);
      if (status.leadTimeMs !== undefined) result.observe(learned.leadTime, status.leadTimeMs, where);
      result.observe(learned.late, status.late, where);
      result.observe(learned.backlog, status.backlog ? 1 : 0, where);
    }
    const counts = await queue.counts().catch(() => undefined);
    if (!counts) return;
    for (const state of ['waiting', 'active', 'delayed', 'failed'] as const)
      result.observe(jobs, counts[state], { ...where, state });
    result.observe(lag, counts.lagMs, where);
    if (counts.held !== undefined) result.observe(held, counts.held, where);
    if (counts.nextDueAt !== undefined) result.observe(nextDue, counts.nextDueAt - Date.now(), where);
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

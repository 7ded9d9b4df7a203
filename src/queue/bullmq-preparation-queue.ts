/**
 * The agent's side of the BullMQ preparation queue: a {@link PreparationQueue} for the
 * manager's `preparationQueue` option. One job per session and summary version, its id the
 * same in every process, so a second add anywhere in the fleet is a no-op while the job is
 * kept (completed jobs are kept an hour by default for that reason; a worker also skips a
 * version already published). An agent withdraws its waiting job when the session moved past
 * its version; each job carries a deadline (the session's expected trigger) that workers
 * check before summarizing, and is listed by its due time for the fleet's schedule
 * (fleet-schedule.ts: workers start it as late as it can still be used). Retries with exponential backoff; failed jobs are kept as the
 * dead letters (`counts().failed`).
 */

import type { Queue } from 'bullmq';
import { CompactError } from '../core/errors.js';
import {
  type PreparationJob,
  type PreparationQueue,
  preparationJobId,
  siblingJobId,
} from '../core/queues/preparation-queue.js';
import { AgentSchedule, type PreparationQueueCounts } from './agent-schedule.js';
import { shiftedJob } from './fleet-clock.js';
import { connectionOptions, loadBullmq, type QueueConnection } from './load-bullmq.js';

export type { PreparationQueueCounts } from './agent-schedule.js';

/** The queue's name unless told otherwise (agents and workers must agree on it). */
export const DEFAULT_PREPARATION_QUEUE_NAME = 'agent-compaction-prepare';

/** Options of {@link bullmqPreparationQueue}. */
export interface BullmqPreparationQueueOptions {
  /** The Redis the queue lives in: a URL, or BullMQ connection options. */
  connection: QueueConnection;
  /** The queue's name; workers must use the same. @default 'agent-compaction-prepare' */
  name?: string;
  /** BullMQ's key prefix in Redis. @default 'bull' */
  prefix?: string;
  /** Runs of one job at most (the first and its retries), then it is dead-lettered. @default 3 */
  attempts?: number;
  /** Delay before the first retry, doubled at each next one, in milliseconds. @default 1000 */
  backoffMs?: number;
  /** Time limit of one add, in milliseconds: past it the preparation is given up. @default 2000 */
  enqueueTimeoutMs?: number;
  /**
   * Seconds a completed job is kept: while it is, a duplicate add of its session and version
   * is a no-op. Its worker keeps only what names it (not the messages it summarized).
   * @default 3600
   */
  keepCompletedSeconds?: number;
  /** Failed (dead-lettered) jobs kept, newest first. @default 1000 */
  keepFailed?: number;
}

/** A preparation queue on BullMQ. */
export interface BullmqPreparationQueue extends PreparationQueue {
  /**
   * Removes the waiting (or held) job of `key` and `baseVersion`; a running one is cancelled
   * in its worker (its summarizer call aborted, nothing published); a finished one stays.
   */
  withdraw(key: string, baseVersion: number, fold?: string): Promise<void>;
  /**
   * Jobs by state (pending, running, failed), the lag of the oldest waiting one, and the jobs
   * the fleet's schedule holds with the earliest due time among them.
   */
  counts(): Promise<PreparationQueueCounts>;
  /**
   * Renews the due time of the listed job of `key` and `baseVersion` (the fleet's schedule),
   * when it moved materially since this queue last wrote it (more than 5% of the time to it,
   * or 50 ms): a steady session's calls do not each write to Redis.
   */
  reschedule(key: string, baseVersion: number, dueAt: number, fold?: string): Promise<void>;
  /**
   * Removes the jobs of `key` for versions 0 to `throughVersion` that are not running,
   * completed and failed ones included (`reset`): their ids are free for the conversation that
   * reuses the session id; a running one is withdrawn (its run cancelled, nothing published).
   * Gives up after `enqueueTimeoutMs`.
   */
  forget(key: string, throughVersion: number): Promise<void>;
  /**
   * Closes the queue's Redis connection (jobs stay in Redis for the workers): waits for the
   * commands in flight up to a second, then drops the connection (a stalled or unreachable
   * Redis never answers them).
   */
  close(): Promise<void>;
}

function positiveInteger(value: number | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min)
    throw new CompactError('invalid_config', `${name} must be an integer >= ${min} (got ${String(value)})`, {
      issues: [{ path: [name], message: `must be an integer >= ${min}` }],
    });
  return value;
}

/**
 * A preparation queue on BullMQ (the `bullmq` and `ioredis` peers are imported on the first
 * add). Give it to the manager as `preparationQueue`, and run workers with
 * `startPreparationWorker` or `agent-compaction worker --config compact.yaml`.
 *
 * @example
 * ```ts
 * const queue = bullmqPreparationQueue({ connection: process.env.REDIS_URL! });
 * const manager = new CompactManager({ store: redisSessionStore({ url }), preparationQueue: queue });
 * ```
 */
export function bullmqPreparationQueue(options: BullmqPreparationQueueOptions): BullmqPreparationQueue {
  const name = options.name ?? DEFAULT_PREPARATION_QUEUE_NAME;
  const connection = connectionOptions(options.connection, 'queue');
  const attempts = positiveInteger(options.attempts, 'attempts', 3);
  const backoffMs = positiveInteger(options.backoffMs, 'backoffMs', 1000, 0);
  const timeoutMs = positiveInteger(options.enqueueTimeoutMs, 'enqueueTimeoutMs', 2000);
  const keepCompleted = positiveInteger(options.keepCompletedSeconds, 'keepCompletedSeconds', 3600, 0);
  const keepFailed = positiveInteger(options.keepFailed, 'keepFailed', 1000, 0);
  let queue: Promise<{ q: Queue; schedule: AgentSchedule }> | undefined;
  let closed = false;
  // The module loads now, at start-up, not on a preflight's first add (its evaluation takes
  // the event loop for a moment); a missing peer is reported by that first add.
  loadBullmq().catch(() => {});
  const open = () => {
    queue ??= loadBullmq().then(({ Queue }) => {
      const q = new Queue(name, { connection, ...(options.prefix ? { prefix: options.prefix } : {}) });
      // Connection errors reach the adds that fail; the emitter must not crash the process.
      q.on('error', () => {});
      return { q, schedule: new AgentSchedule(q) };
    });
    return queue;
  };
  // The ids this queue's sibling jobs got (another fork's job held their base's id), by base id and fold.
  const siblings = new Map<string, string>();
  const idOf = (key: string, baseVersion: number, fold: string | undefined) => {
    const base = preparationJobId(key, baseVersion);
    return (fold && siblings.get(`${base} ${fold}`)) || base;
  };
  const addAs = async (
    { q, schedule }: { q: Queue; schedule: AgentSchedule },
    jobId: string,
    job: PreparationJob,
  ) => {
    // Listed by its due time first: a worker that picks it at once counts it ahead of later
    // ones. Without one, only its withdrawal mark is settled (withdrawn since it was decided?).
    await schedule.list(jobId, job.dueAt, job.enqueuedAt);
    await q.add('prepare', job, {
      jobId,
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: { age: keepCompleted },
      removeOnFail: { count: keepFailed },
    });
  };
  return {
    name,
    async enqueue(job: PreparationJob) {
      if (closed) throw new CompactError('aborted', 'the preparation queue is closed');
      const jobId = preparationJobId(job.key, job.baseVersion);
      const add = open().then(async (opened) => {
        // Its times on the fleet's clock (Redis's): the workers' clocks may run apart from ours.
        await opened.schedule.clock.sync();
        const fleetJob = shiftedJob(job, opened.schedule.clock.offset());
        await addAs(opened, jobId, fleetJob);
        // The id held by another fork's job at this base (or by another conversation's, before a
        // reset): this fold is added under an id of its own. The same fold's job is a no-op, as before.
        const held = job.fold
          ? ((await opened.q.getJob(jobId))?.data as PreparationJob | undefined)
          : undefined;
        if (!held?.fold || held.fold === job.fold) return;
        const sibling = siblingJobId(job.key, job.baseVersion, job.fold!);
        siblings.set(`${jobId} ${job.fold}`, sibling);
        if (siblings.size > SIBLINGS_KEPT) siblings.delete(siblings.keys().next().value as string);
        await addAs(opened, sibling, fleetJob);
      });
      await withTimeout(add, timeoutMs);
    },
    async withdraw(key: string, baseVersion: number, fold?: string) {
      // Only a queue this process opened (it added jobs, or counted them) takes a job back.
      if (closed || !queue) return;
      // With a fold, only that fold's job: another fork's job at this base stays.
      await (await queue).schedule.withdraw(idOf(key, baseVersion, fold), fold);
    },
    async reschedule(key: string, baseVersion: number, dueAt: number, fold?: string) {
      // Only a queue this process added to; the job listed already (not run or withdrawn since).
      if (closed || !queue) return;
      const { schedule } = await queue;
      await schedule.renew(idOf(key, baseVersion, fold), dueAt + schedule.clock.offset());
    },
    async forget(key: string, throughVersion: number) {
      if (closed) return;
      const ids = Array.from({ length: throughVersion + 1 }, (_, version) => preparationJobId(key, version));
      // Opened if need be: the process that resets a session need not be one that added its jobs.
      // A running job (locked) is withdrawn: its run is cancelled, the old conversation's
      // summary not published for the new one.
      const removed = open().then(({ q, schedule }) =>
        Promise.all(
          ids
            .map(async (id) => {
              const job = await q.getJob(id);
              if ((await job?.getState()) === 'active') await schedule.withdraw(id);
              else await q.remove(id);
            })
            .map((done) => done.catch(() => 0)),
        ),
      );
      await withTimeout(removed, timeoutMs);
    },
    counts: async () => (await open()).schedule.counts(),
    async close() {
      closed = true;
      if (!queue) return;
      const { q } = await queue;
      // A graceful close waits for the commands in flight, which a stalled or unreachable Redis
      // never answers: past the bound the connection is dropped (as the Redis session store's).
      const closing = q.close().then(
        () => true,
        () => true,
      );
      // The drop is not awaited: a connection waiting to reconnect to a gone server (no attempt
      // under way) never emits the `end` it waits for (as the worker's close, worker-close.ts).
      if (!(await settlesWithin(closing, CLOSE_TIMEOUT_MS))) void q.disconnect().catch(() => {});
    },
  };
}

/** Sibling job ids remembered at most (the oldest go first). */
const SIBLINGS_KEPT = 10_000;

/** How long `close()` waits for the queue's commands in flight before it drops the connection (ms). */
const CLOSE_TIMEOUT_MS = 1_000;

/** True when `work` settled within `ms`, false once `ms` passed first. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([work.then(() => true), late]).finally(() => clearTimeout(timer));
}

/** `work`, or a `storage_failed` rejection once `ms` passed (the work is not cancelled). */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new CompactError('storage_failed', `the preparation queue did not take the job within ${ms} ms`),
        ),
      ms,
    );
    timer.unref?.();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The agent's side of the fleet's schedule (fleet-schedule.ts) on one BullMQ queue: a job is
 * listed by its due time when added, renewed when its session's estimate moves materially (not
 * at every call: a steady session's estimates move by a call's jitter), marked when withdrawn,
 * and the held jobs are counted for `counts()`.
 */

import type { Queue } from 'bullmq';
import { FleetClock } from './fleet-clock.js';
import {
  heldJobs,
  listDue,
  markWithdrawn,
  type ScheduleClient,
  type ScheduleKeys,
  scheduleKeys,
} from './fleet-schedule.js';

/**
 * A due time is renewed when it moved by more than this share of the time to it (or
 * {@link RENEW_MIN_MS}): the workers' margin for the schedule's error is learned from the
 * listed due times, renewals included (due-drift.ts).
 */
export const RENEW_SHARE = 0.05;
/** A due time is renewed when it moved by more than this (ms), however far it is. */
export const RENEW_MIN_MS = 50;
/** Jobs whose last written due time is remembered at most (the oldest go first). */
const TOLD_KEPT = 10_000;

/** Jobs of the queue by state. */
export interface PreparationQueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  completed: number;
  /** Dead letters: jobs that failed every attempt. */
  failed: number;
  /**
   * The queue's lag: how long its oldest waiting job has waited, in milliseconds (0 when none
   * waits).
   */
  lagMs: number;
  /**
   * Delayed jobs the fleet's schedule holds until their start (fleet-wide: the delayed jobs
   * still listed as due; the rest of `delayed` are retries waiting out their backoff).
   */
  held: number;
  /** The earliest due time (epoch ms) of a held job, the session's expected trigger; absent when none is held. */
  nextDueAt?: number;
}

/** The schedule's calls of an agent's queue (one per queue object). */
export class AgentSchedule {
  readonly #queue: Queue;
  readonly #keys: ScheduleKeys;
  /** The due time last written per job id. */
  readonly #told = new Map<string, number>();
  /** The fleet's clock: the times this schedule writes, and the job's, are on it (fleet-clock.ts). */
  readonly clock: FleetClock;

  constructor(queue: Queue) {
    this.#queue = queue;
    this.#keys = scheduleKeys((type) => queue.toKey(type));
    this.clock = FleetClock.of(() => this.#client(), this.#keys);
  }

  /**
   * Lists a job being added by its due time, if any (a duplicate add of a job run since is not
   * listed again), and lifts its withdrawal mark unless the add was decided (`decidedAt`)
   * before the withdrawal.
   */
  async list(jobId: string, dueAt: number | undefined, decidedAt?: number): Promise<void> {
    await listDue(await this.#client(), this.#keys, jobId, dueAt, false, decidedAt);
    if (dueAt !== undefined) this.#tell(jobId, dueAt);
  }

  /**
   * Renews a listed job's due time when it moved materially since the last write; true when it
   * wrote (a job not listed, run or withdrawn since, is left alone by Redis).
   */
  async renew(jobId: string, dueAt: number, now = this.clock.now()): Promise<boolean> {
    const told = this.#told.get(jobId);
    if (told !== undefined && Math.abs(dueAt - told) <= Math.max(RENEW_MIN_MS, RENEW_SHARE * (dueAt - now)))
      return false;
    this.#tell(jobId, dueAt);
    await listDue(await this.#client(), this.#keys, jobId, dueAt, true);
    return true;
  }

  /**
   * Removes the waiting (or held) job `jobId`; a finished one stays (a completed one keeps the
   * id taken). One not found is marked withdrawn (an add decided before now, still on the way,
   * is dropped by the worker that picks it). An active one is marked withdrawn: a worker holding it again drops it at its
   * next pick, and a worker running it cancels the run (its summarizer call is aborted;
   * withdrawals.ts). With `fold`, a job of another fold under the id is left alone.
   */
  async withdraw(jobId: string, fold?: string): Promise<void> {
    const job = await this.#queue.getJob(jobId);
    // Another fold's job under this id (a sibling fork's at the same base): left alone.
    const heldFold = (job?.data as { fold?: string } | undefined)?.fold;
    if (fold && heldFold && heldFold !== fold) return;
    this.#told.delete(jobId);
    const state = await job?.getState();
    const held = state === 'waiting' || state === 'delayed' || state === 'prioritized';
    if (job && held) await job.remove().catch(() => {});
    // No job yet: another agent's add may be on the way; the mark outlasts it (fleet-schedule.ts).
    if (!job || held || state === 'active') {
      await this.clock.sync();
      await markWithdrawn(await this.#client(), this.#keys, jobId, this.clock.now()).catch(() => {});
    }
  }

  /** Jobs by state, the lag of the oldest waiting one, and the held jobs with the earliest due time. */
  async counts(): Promise<PreparationQueueCounts> {
    const q = this.#queue;
    const [counts, oldest, { held, nextDueAt }] = await Promise.all([
      q.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed'),
      q.getJobs(['waiting'], 0, 0, true),
      this.#client().then((client) => heldJobs(client, this.#keys, q.toKey('delayed'))),
    ]);
    const since = oldest[0]?.timestamp;
    return {
      waiting: counts.waiting ?? 0,
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      completed: counts.completed ?? 0,
      failed: counts.failed ?? 0,
      lagMs: since === undefined ? 0 : Math.max(0, Date.now() - since),
      held,
      ...(nextDueAt === undefined ? {} : { nextDueAt }),
    };
  }

  #tell(jobId: string, dueAt: number): void {
    this.#told.delete(jobId);
    this.#told.set(jobId, dueAt);
    if (this.#told.size > TOLD_KEPT) this.#told.delete(this.#told.keys().next().value as string);
  }

  /** The queue's Redis client. */
  #client(): Promise<ScheduleClient> {
    return this.#queue.getBackend().client;
  }
}

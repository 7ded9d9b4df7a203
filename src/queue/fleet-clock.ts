/**
 * The fleet's clock: the Redis server's. The times an agent writes for the queue (a job's
 * deadline and due time, when its add was decided, when it was withdrawn) and the times a
 * worker compares them with are read on it, each process by its own offset to the server's
 * `TIME`: a worker whose clock ran a second behind the agents' held every job past its trigger
 * (the queue's share 1.00 to 0.13 in a 2-3 s threshold-to-trigger window), one a few seconds
 * ahead dropped them as expired.
 */

import type { PreparationJob } from '../core/queues/preparation-queue.js';
import { type ScheduleClient, type ScheduleKeys, serverTime } from './fleet-schedule.js';

/** The offset is measured again at most this often (ms), in the background. */
export const FLEET_CLOCK_REMEASURE_MS = 60_000;
/**
 * Clocks apart by no more than this (ms) beyond the measurement's own error (half its round
 * trip) are taken as one: a job's times are written as they were (the schedule's unit is 250 ms).
 */
export const FLEET_CLOCK_TOLERANCE_MS = 100;

/** This process's reading of the fleet's clock. */
export class FleetClock {
  readonly #measure: () => Promise<number>;
  #offset = 0;
  #measuredAt: number | undefined;
  #measuring: Promise<void> | undefined;

  /** `measure` resolves with the server's time in epoch ms (a failure keeps the last offset). */
  constructor(measure: () => Promise<number>) {
    this.#measure = measure;
  }

  /** A clock on the Redis server `client` talks to. */
  static of(client: () => Promise<ScheduleClient>, keys: ScheduleKeys): FleetClock {
    return new FleetClock(async () => serverTime(await client(), keys));
  }

  /** The fleet's time now (epoch ms). */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** The fleet's time minus this process's (ms): add it to a local time to write it for the fleet. */
  offset(): number {
    return this.#offset;
  }

  /**
   * Measures the offset: awaited the first time (until it answered or failed), later again in
   * the background once {@link FLEET_CLOCK_REMEASURE_MS} passed.
   */
  async sync(): Promise<void> {
    if (this.#measuredAt !== undefined && Date.now() - this.#measuredAt < FLEET_CLOCK_REMEASURE_MS) return;
    const first = this.#measuredAt === undefined;
    this.#measuring ??= this.#remeasure().finally(() => {
      this.#measuring = undefined;
    });
    if (first) await this.#measuring;
  }

  async #remeasure(): Promise<void> {
    const before = Date.now();
    try {
      const server = await this.#measure();
      const after = Date.now();
      // The server read its clock about halfway through the round trip.
      const offset = Math.round(server - (before + after) / 2);
      this.#offset = Math.abs(offset) <= (after - before) / 2 + FLEET_CLOCK_TOLERANCE_MS ? 0 : offset;
    } catch {
      // Unmeasured: the last offset stands (0 before any).
    }
    this.#measuredAt = Date.now();
  }
}

/** `job` with its times (`enqueuedAt`, `deadline`, `dueAt`) moved by `ms`: onto the fleet's clock or off it. */
export function shiftedJob<T extends PreparationJob>(job: T, ms: number): T {
  if (ms === 0) return job;
  return {
    ...job,
    enqueuedAt: job.enqueuedAt + ms,
    ...(job.deadline === undefined ? {} : { deadline: job.deadline + ms }),
    ...(job.dueAt === undefined ? {} : { dueAt: job.dueAt + ms }),
  };
}

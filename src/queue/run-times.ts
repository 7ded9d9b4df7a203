/**
 * How long a worker's runs took (those that published, and those that summarized but came too
 * late to publish: a worker whose runs are all late learns too): a job due sooner than the
 * fastest is dropped unsummarized; a job due later is held for the median, with the spread of
 * the recent runs (their p90 over the median) as its margin (fleet-schedule.ts).
 */

/** The times of the latest runs (the newest {@link RUN_TIMES_KEPT}). */
export class RunTimes {
  readonly #times: number[] = [];

  record(ms: number): void {
    this.#times.push(ms);
    if (this.#times.length > RUN_TIMES_KEPT) this.#times.shift();
  }

  /**
   * The fastest recent run's time (a job is dropped only when even that would be late: a drop
   * costs the agent a compaction at its trigger; the first runs are slow); `undefined` before a run.
   */
  fastest(): number | undefined {
    return this.#times.length === 0 ? undefined : Math.min(...this.#times);
  }

  /** The median recent run's time (a held job's start is planned with it); `undefined` before a run. */
  median(): number | undefined {
    return this.quantile(0.5);
  }

  /**
   * How much longer than the median a slow recent run took (the p90 over the median, at least
   * {@link MIN_RUN_SPREAD_MS}): a held job's margin for its own run; `undefined` before a run.
   */
  spread(): number | undefined {
    const median = this.median();
    const slow = this.quantile(0.9);
    return median === undefined || slow === undefined
      ? undefined
      : Math.max(MIN_RUN_SPREAD_MS, slow - median);
  }

  /** The `q` quantile of the recent runs' times; `undefined` before a run. */
  quantile(q: number): number | undefined {
    if (this.#times.length === 0) return undefined;
    const sorted = [...this.#times].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
  }
}

/** Runs whose times a worker keeps (for the deadline check). */
export const RUN_TIMES_KEPT = 32;

/**
 * The least margin (ms) for a run's own time: the pick after a hold (BullMQ promotes a delayed
 * job on its worker's next turn) and the publish's read at the trigger are not in a run's time.
 */
export const MIN_RUN_SPREAD_MS = 100;

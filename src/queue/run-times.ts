/**
 * How long a worker's published runs took: a job due sooner than the fastest is dropped
 * unsummarized; a job due later is held for the median (fleet-schedule.ts).
 */

/** The times of the latest published runs (the newest {@link RUN_TIMES_KEPT}). */
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
    if (this.#times.length === 0) return undefined;
    const sorted = [...this.#times].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}

/** Published runs whose times a worker keeps (for the deadline check). */
export const RUN_TIMES_KEPT = 32;

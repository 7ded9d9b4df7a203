/** How long a worker's published runs took: a job due sooner than the fastest is dropped unsummarized. */

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
}

/** Published runs whose times a worker keeps (for the deadline check). */
export const RUN_TIMES_KEPT = 32;

/**
 * How far the fleet schedule's due times move earlier once a job starts: the schedule's own
 * error, learned by each worker. A job's listed due time (the session's expected trigger,
 * renewed by its agents as the session goes on) is read when the worker decides to run it and
 * again when its run ends; how far it came earlier meanwhile, as a share of the time to it
 * when the run was decided, is one sample (an estimate's error grows with its distance). The p90 of the recent samples is the margin a held job gets, as a
 * share of the time to its due time (fleet-schedule.ts), in place of a constant: a deployment
 * whose sessions keep a steady pace starts its jobs later (fewer for a version its session
 * never reaches), one whose sessions speed up around their triggers earlier.
 */

/** The margin's share before {@link MIN_DRIFT_SAMPLES} were seen (bench/queue.ts, lockstep: triggers came up to 1.3 s before an estimate made 4-5 s ahead). */
export const DEFAULT_DRIFT_SHARE = 0.25;
/** The margin's share at most (a sample past it is an outlier: a session's pace that changed at once). */
export const MAX_DRIFT_SHARE = 0.5;
/** Samples the learned share needs (before, {@link DEFAULT_DRIFT_SHARE}). */
export const MIN_DRIFT_SAMPLES = 8;
/** Samples kept (the newest). */
export const DRIFT_SAMPLES = 64;
/** A job waited at least this long (ms) between its two readings for a sample: a shorter wait says little. */
export const MIN_DRIFT_WAIT_MS = 200;
/** The quantile of the samples taken as the margin's share. */
const DRIFT_QUANTILE = 0.9;

/** A due time as read at a moment (epoch ms both). */
export interface DueReading {
  readonly at: number;
  readonly dueAt: number;
}

/** A worker's recent due-time drifts (see the module's comment). */
export class DueDrift {
  readonly #samples: number[] = [];

  /**
   * Records a job's due time read when its run was decided (`first`) and when it ended
   * (`last`): the share by which it came earlier, of the time to it when the run was decided
   * (or of the time between, when longer; 0 when it moved later). The margin is taken as that
   * share of the time to the due time, so the sample is measured the same way: a due time that
   * jitters by a call's time over a short run far from its due time is a small share (measured
   * over the run alone, lockstep sessions under load learned the cap, 0.5, and started jobs a
   * second early; bench/queue.ts).
   */
  record(first: DueReading, last: DueReading): void {
    const waited = last.at - first.at;
    if (!Number.isFinite(waited) || waited < MIN_DRIFT_WAIT_MS) return;
    const earlier = Math.max(0, first.dueAt - last.dueAt);
    const span = Math.max(waited, first.dueAt - first.at);
    this.#samples.push(Math.min(MAX_DRIFT_SHARE, earlier / span));
    if (this.#samples.length > DRIFT_SAMPLES) this.#samples.shift();
  }

  /** Samples seen (at most {@link DRIFT_SAMPLES}). */
  get samples(): number {
    return this.#samples.length;
  }

  /** The margin's share of the time to a due time: the samples' p90, or the default before enough. */
  share(): number {
    if (this.#samples.length < MIN_DRIFT_SAMPLES) return DEFAULT_DRIFT_SHARE;
    const sorted = [...this.#samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * DRIFT_QUANTILE))]!;
  }
}

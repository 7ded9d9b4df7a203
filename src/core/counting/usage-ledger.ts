/**
 * What a manager learns from the usage providers report, per session: the last request's
 * input (for calibration and `lastReportedUsage`) and the session's cost under prompt caching
 * (`costSnapshot`, `compact.usage` events). Freed with the session's memory.
 */
import {
  type CachePrice,
  checkedUsage,
  type SessionCost,
  SessionCosts,
  type UsageCounts,
  usageEvent,
} from './session-cost.js';
import { type UsageCalibration, usageMismatch } from './usage-calibration.js';

/** Input tokens a caller reported for a session's last model call, and when. */
export interface ReportedInput {
  inputTokens: number;
  at: number;
}

/** The events one reported usage gives. */
export interface RecordedUsage {
  /** A `compact.warning` (usage_mismatch) when calibration refused the figure the first time. */
  mismatch: ReturnType<typeof usageMismatch> | undefined;
  /** The `compact.usage` event's properties. */
  usage: ReturnType<typeof usageEvent>;
}

export class UsageLedger {
  readonly #reported = new Map<string, ReportedInput>();
  readonly #costs = new SessionCosts();

  constructor(readonly price: CachePrice) {}

  /** Checks and records one request's usage (throws `invalid_config` naming a bad field). */
  record(sessionId: string, usage: UsageCounts, calibration: UsageCalibration): RecordedUsage {
    const split = checkedUsage(usage);
    this.#reported.set(sessionId, { inputTokens: split.input, at: Date.now() });
    const state = calibration.recordReported(sessionId, split.input);
    const mismatch =
      state?.lastRejected && state.rejected === 1
        ? usageMismatch(split.input, calibration.lastSent(sessionId))
        : undefined;
    const { billed } = this.#costs.record(sessionId, split, this.price);
    return { mismatch, usage: usageEvent(split, billed, this.#costs.snapshot(sessionId)!) };
  }

  /** Counts a compaction that rewrote the session's prefix. */
  rewrite(sessionId: string): void {
    this.#costs.rewrite(sessionId, this.price);
  }

  lastReported(sessionId: string): ReportedInput | undefined {
    return this.#reported.get(sessionId);
  }

  cost(sessionId: string): SessionCost | undefined {
    return this.#costs.snapshot(sessionId);
  }

  delete(sessionId: string): void {
    this.#reported.delete(sessionId);
    this.#costs.delete(sessionId);
  }

  clear(): void {
    this.#reported.clear();
    this.#costs.clear();
  }
}

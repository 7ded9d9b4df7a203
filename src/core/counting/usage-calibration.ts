/**
 * Calibration of local token estimates from the input tokens providers report. Models
 * without a public tokenizer (Claude, Gemini, open models) are counted with an o200k_base
 * estimate; once a session has seen usage, a per-session ratio (reported / estimated)
 * replaces the fixed safety margin, and the request that extends the last reported one is
 * counted as "last reported usage + the estimate of what changed since".
 */
import { invalidConfig } from '../errors.js';
import type { MessageFormat } from '../messages/message.js';

/**
 * Whether a counter's counts of a request in `format` decide without calibration. Exact
 * counters are OpenAI's tokenizers: an Anthropic request counted by one (a proxy in front of
 * Anthropic run with an OpenAI model, the CLI's default) is an estimate of what Claude counts,
 * about a quarter short, so the usage the provider reports calibrates it as for any estimate.
 */
export function countsExactly(counter: { readonly exact: boolean }, format: MessageFormat): boolean {
  return counter.exact && format !== 'anthropic';
}

/** One request's local estimate next to the provider's reported input tokens. */
export interface UsageSample {
  /** What the local counter estimated for the request (before calibration). */
  estimatedTokens: number;
  /** Input tokens the provider reported for it (cache reads and writes included). */
  reportedTokens: number;
}

/** Options of {@link UsageCalibration}. */
export interface UsageCalibrationOptions {
  /**
   * Weight of the newest sample in the running ratio (1 = the last sample only). Later
   * requests share most of their content with earlier ones, so recent samples predict best.
   * @default 0.5
   */
  weight?: number;
  /**
   * Ratios are clamped to `[1 / maxCorrection, maxCorrection]`: a reported figure that far
   * off is a different request (or a bug), not a tokenizer difference.
   * @default 3
   */
  maxCorrection?: number;
  /**
   * Sessions remembered (least recently used forgotten first).
   * @default 10000
   */
  maxSessions?: number;
  /**
   * Reported usage is evidence, not truth: a report whose ratio to the estimate of the same
   * request falls outside `[1 / mismatchBand, mismatchBand]` is not used (a proxy that reports
   * a constant, a report for another request); the estimate stays in force, so compaction
   * never turns off because of it. Two reports in a row outside the band at the same ratio
   * (within 10%) for requests of different sizes (by a quarter at least) are a provider that
   * counts that differently, not a glitch (a constant report gives a ratio that moves with
   * the size): the second starts the session's calibration afresh.
   * @default 2
   */
  mismatchBand?: number;
}

/** What is known about one session's calibration. */
export interface CalibrationState {
  /** The running ratio reported / estimated, of whole requests. */
  ratio: number;
  /**
   * The running ratio of what grew between consecutive requests (reported growth /
   * estimated growth): free of fixed costs the two sides count differently (tool schemas,
   * per-request framing), so it is what scales the estimate of what was added.
   */
  marginalRatio?: number;
  /** Samples recorded. */
  samples: number;
  /** The last sample used. */
  last: UsageSample;
  /** Reports left out because they were too far from the estimate (see `mismatchBand`). */
  rejected?: number;
  /** Whether the sample just recorded was left out. */
  lastRejected?: boolean;
}

/** Defaults of {@link UsageCalibrationOptions}. */
export const DEFAULT_CALIBRATION_OPTIONS = Object.freeze({
  weight: 0.5,
  maxCorrection: 3,
  maxSessions: 10_000,
  mismatchBand: 2,
});

function checkTokens(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw invalidConfig(`usage.${field}`, `must be a non-negative number (got ${String(value)})`);
  return value;
}

/**
 * Per-session correction of estimated counts from reported usage.
 *
 * @example
 * ```ts
 * const calibration = new UsageCalibration();
 * calibration.record('s1', { estimatedTokens: 10_000, reportedTokens: 9_000 });
 * calibration.adjust('s1', 12_000); // 10_800
 * ```
 */
export class UsageCalibration {
  readonly #weight: number;
  readonly #maxCorrection: number;
  readonly #maxSessions: number;
  readonly #band: number;
  readonly #sessions = new Map<string, CalibrationState>();
  readonly #sent = new Map<string, number>();
  /** The report last left out, per session, while no report has been used since. */
  readonly #outside = new Map<string, UsageSample>();

  constructor(options: UsageCalibrationOptions = {}) {
    const o = { ...DEFAULT_CALIBRATION_OPTIONS, ...options };
    if (!(o.weight > 0 && o.weight <= 1)) throw invalidConfig('calibration.weight', 'must be in (0, 1]');
    if (!(o.maxCorrection >= 1) || !Number.isFinite(o.maxCorrection))
      throw invalidConfig('calibration.maxCorrection', 'must be a number >= 1');
    if (!Number.isInteger(o.maxSessions) || o.maxSessions < 1)
      throw invalidConfig('calibration.maxSessions', 'must be a positive integer');
    if (!(o.mismatchBand > 1) || !Number.isFinite(o.mismatchBand))
      throw invalidConfig('calibration.mismatchBand', 'must be a number > 1');
    this.#band = o.mismatchBand;
    this.#weight = o.weight;
    this.#maxCorrection = o.maxCorrection;
    this.#maxSessions = o.maxSessions;
  }

  /**
   * Records one request's estimate and reported usage. Samples with a zero estimate or a
   * zero report carry no ratio and only become the session's last sample.
   */
  record(sessionId: string, sample: UsageSample): CalibrationState {
    const estimatedTokens = checkTokens(sample.estimatedTokens, 'estimatedTokens');
    const reportedTokens = checkTokens(sample.reportedTokens, 'reportedTokens');
    const previous = this.#sessions.get(sessionId);
    if (estimatedTokens > 0 && reportedTokens > 0) {
      const observed = reportedTokens / estimatedTokens;
      if (observed > this.#band || observed < 1 / this.#band) {
        if (!this.#confirms(sessionId, sample)) return this.#reject(sessionId, sample, previous);
        return this.#restart(sessionId, sample, previous);
      }
    }
    this.#outside.delete(sessionId);
    const last = { estimatedTokens, reportedTokens };
    let ratio = previous?.ratio ?? 1;
    let samples = previous?.samples ?? 0;
    let marginalRatio = previous?.marginalRatio;
    if (estimatedTokens > 0 && reportedTokens > 0) {
      const observed = reportedTokens / estimatedTokens;
      ratio = samples === 0 ? this.#clamp(observed) : this.#blend(ratio, observed);
      samples++;
      // Growth from the report of the request just before only: not from a report left out
      // (its placeholder holds no reported tokens; after it, the growth spans requests never
      // measured, as across a rewind or a switch of branch).
      const before = previous && previous.samples > 0 && !previous.lastRejected ? previous.last : undefined;
      // Growth large enough that rounding on either side does not dominate the ratio.
      if (
        before &&
        before.reportedTokens > 0 &&
        estimatedTokens - before.estimatedTokens >= 64 &&
        reportedTokens > before.reportedTokens
      ) {
        const grown = (reportedTokens - before.reportedTokens) / (estimatedTokens - before.estimatedTokens);
        // A growth ratio outside the band around the whole ratio is not the tokenizer: the two
        // requests hold different kinds of text (a compaction rewrote the history between them).
        if (grown <= ratio * this.#band && grown >= ratio / this.#band)
          marginalRatio =
            marginalRatio === undefined ? this.#clamp(grown) : this.#blend(marginalRatio, grown);
      }
    }
    const state: CalibrationState = { ratio, samples, last };
    if (marginalRatio !== undefined) state.marginalRatio = marginalRatio;
    if (previous?.rejected) state.rejected = previous.rejected;
    return this.#remember(sessionId, state);
  }

  /**
   * Whether `sample`, outside the band, repeats the report left out just before: the same
   * ratio within 10%, for a request whose estimate differs by a quarter at least.
   */
  #confirms(sessionId: string, sample: UsageSample): boolean {
    const before = this.#outside.get(sessionId);
    this.#outside.delete(sessionId);
    this.#outside.set(sessionId, sample);
    if (!before) return false;
    const ratio = sample.reportedTokens / sample.estimatedTokens;
    const ratioBefore = before.reportedTokens / before.estimatedTokens;
    const sizes = Math.max(sample.estimatedTokens, before.estimatedTokens);
    return (
      Math.abs(ratio / ratioBefore - 1) <= 0.1 &&
      sizes >= 1.25 * Math.min(sample.estimatedTokens, before.estimatedTokens)
    );
  }

  /** A confirmed report outside the band: the session's calibration starts afresh from it. */
  #restart(sessionId: string, sample: UsageSample, previous: CalibrationState | undefined): CalibrationState {
    this.#outside.delete(sessionId);
    const state: CalibrationState = {
      ratio: this.#clamp(sample.reportedTokens / sample.estimatedTokens),
      samples: 1,
      last: { estimatedTokens: sample.estimatedTokens, reportedTokens: sample.reportedTokens },
    };
    if (previous?.rejected) state.rejected = previous.rejected;
    return this.#remember(sessionId, state);
  }

  /** A report too far from the estimate: counted, not used; the session keeps what it had. */
  #reject(sessionId: string, sample: UsageSample, previous: CalibrationState | undefined): CalibrationState {
    const state: CalibrationState = previous
      ? { ...previous, rejected: (previous.rejected ?? 0) + 1, lastRejected: true }
      : {
          ratio: 1,
          samples: 0,
          last: { estimatedTokens: sample.estimatedTokens, reportedTokens: 0 },
          rejected: 1,
          lastRejected: true,
        };
    return this.#remember(sessionId, state);
  }

  #remember(sessionId: string, state: CalibrationState): CalibrationState {
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, state);
    if (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value as string;
      this.#sessions.delete(oldest);
      this.#sent.delete(oldest);
      this.#outside.delete(oldest);
    }
    return state;
  }

  #clamp(ratio: number): number {
    return Math.min(this.#maxCorrection, Math.max(1 / this.#maxCorrection, ratio));
  }

  #blend(running: number, observed: number): number {
    return running + this.#weight * (this.#clamp(observed) - running);
  }

  /** Remembers the estimate of the request just sent, for {@link recordReported}. */
  noteSent(sessionId: string, estimatedTokens: number): void {
    this.#sent.delete(sessionId);
    this.#sent.set(sessionId, checkTokens(estimatedTokens, 'estimatedTokens'));
    if (this.#sent.size > this.#maxSessions) this.#sent.delete(this.#sent.keys().next().value as string);
  }

  /** The estimate last passed to {@link noteSent} for the session. */
  lastSent(sessionId: string): number | undefined {
    return this.#sent.get(sessionId);
  }

  /**
   * Records reported usage against the estimate last passed to {@link noteSent} for the
   * session; `undefined` (nothing recorded) when no estimate was noted.
   */
  recordReported(sessionId: string, reportedTokens: number): CalibrationState | undefined {
    const estimatedTokens = this.#sent.get(sessionId);
    if (estimatedTokens === undefined) return undefined;
    return this.record(sessionId, { estimatedTokens, reportedTokens });
  }

  /** The session's calibration, if it has seen usage. */
  state(sessionId: string): Readonly<CalibrationState> | undefined {
    return this.#sessions.get(sessionId);
  }

  /** The session's ratio reported / estimated (`undefined` before any usage). */
  ratio(sessionId: string): number | undefined {
    const state = this.#sessions.get(sessionId);
    return state && state.samples > 0 ? state.ratio : undefined;
  }

  /**
   * A calibrated count: `estimatedTokens` times the session's ratio, rounded up; unchanged
   * before the session has seen usage (the counter's own margin stays in force).
   */
  adjust(sessionId: string, estimatedTokens: number): number {
    const ratio = this.ratio(sessionId);
    return ratio === undefined ? estimatedTokens : Math.ceil(estimatedTokens * ratio);
  }

  /**
   * The count of a request that extends the session's last reported one (same messages,
   * more appended): {@link countFromLastUsage} with the session's marginal ratio (its whole
   * ratio until two requests have been seen). Unchanged before any usage.
   */
  countExtending(sessionId: string, nowEstimate: number): number {
    const state = this.#sessions.get(sessionId);
    if (!state || state.samples === 0) return nowEstimate;
    return countFromLastUsage({
      lastReported: state.last.reportedTokens,
      lastEstimate: state.last.estimatedTokens,
      nowEstimate,
      ratio: state.marginalRatio ?? state.ratio,
    });
  }

  /**
   * The count the preflight should decide on: for a counter that is not exact, once the
   * session has seen usage, {@link countExtending} (last reported usage + calibrated estimate
   * of what changed); otherwise the estimate itself. Returns the figures events show.
   */
  count(sessionId: string, estimatedTokens: number, exact: boolean): CalibratedCount {
    const state = this.#sessions.get(sessionId);
    if (exact || !state || state.samples === 0) return { tokens: estimatedTokens, estimatedTokens };
    return {
      tokens: this.countExtending(sessionId, estimatedTokens),
      estimatedTokens,
      lastReportedTokens: state.last.reportedTokens,
      ratio: state.marginalRatio ?? state.ratio,
    };
  }

  /** Forgets a session. */
  forget(sessionId: string): void {
    this.#sessions.delete(sessionId);
    this.#sent.delete(sessionId);
    this.#outside.delete(sessionId);
  }

  /** Forgets every session. */
  clear(): void {
    this.#sessions.clear();
    this.#sent.clear();
    this.#outside.clear();
  }
}

/** What {@link UsageCalibration.count} returns. */
export interface CalibratedCount {
  /** The count to decide on. */
  tokens: number;
  /** The local estimate it started from. */
  estimatedTokens: number;
  /** The last reported input tokens it built on, when calibrated. */
  lastReportedTokens?: number;
  /** The ratio that scaled the estimate of what changed, when calibrated. */
  ratio?: number;
}

/** Input of {@link countFromLastUsage}. */
export interface LastUsageInput {
  /** Input tokens the provider reported for the last request. */
  lastReported: number;
  /** The local estimate of that same request. */
  lastEstimate: number;
  /** The local estimate of the request about to be sent. */
  nowEstimate: number;
  /**
   * Scales the local estimate of what changed (the session's calibration ratio).
   * @default 1
   */
  ratio?: number;
}

/**
 * "Last reported usage + local estimate of what changed since": the provider's own count of
 * everything it has seen, plus the estimate (times `ratio`) of what was added or removed
 * since. Only the difference carries estimation error. Valid when the request extends the
 * last one; after the history was rewritten (a compaction), calibrate the full estimate
 * instead. Never below zero.
 *
 * @example
 * ```ts
 * countFromLastUsage({ lastReported: 9_000, lastEstimate: 10_000, nowEstimate: 10_500 }); // 9_500
 * ```
 */
export function countFromLastUsage(input: LastUsageInput): number {
  const lastReported = checkTokens(input.lastReported, 'lastReported');
  const lastEstimate = checkTokens(input.lastEstimate, 'lastEstimate');
  const nowEstimate = checkTokens(input.nowEstimate, 'nowEstimate');
  const ratio = input.ratio ?? 1;
  return Math.max(0, Math.ceil(lastReported + (nowEstimate - lastEstimate) * ratio));
}

/** The `compact.warning` of a report left out of calibration (once per session). */
export function usageMismatch(
  reportedTokens: number,
  estimatedTokens: number | undefined,
): { code: 'usage_mismatch'; message: string; context: Record<string, unknown> } {
  return {
    code: 'usage_mismatch',
    message: `reported usage (${reportedTokens} input tokens) is far from the estimate (${estimatedTokens ?? '?'}) of the same request: not used for calibration; the estimate decides (reported once per session)`,
    context: { reportedTokens, estimatedTokens },
  };
}

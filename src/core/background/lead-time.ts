/**
 * The lead time of queued preparations, learned per manager: how long a preparation takes
 * from its enqueue until its summary is published, and how
 * fast each session grows per call (tokens and milliseconds). A preparation starts where, at
 * the session's growth, the trigger is about a lead time of calls away; with nothing learned
 * yet, at `policy.prepareAtPct`.
 *
 * Latency samples are the p90 of the last {@link LATENCY_SAMPLES}. A preparation still not
 * ready at its trigger is a sample too, of at least the time it had, counted
 * {@link LATE_FACTOR} times over (the next one starts that much earlier). Growth is an EWMA of
 * the deltas between consecutive calls on the same summary version.
 */

/** Latency samples kept (the newest). */
export const LATENCY_SAMPLES = 32;
/** A late preparation counts as a latency of this many times the time it had. */
export const LATE_FACTOR = 1.5;
/** The lead time is the latency's p90 times this (a margin for jitter). */
const MARGIN = 1.25;
/**
 * A job's deadline is this many times the session's expected time to its trigger: calls slow
 * down around a trigger (a fleet's sessions compact together), and a job dropped that would
 * have been in time costs the agent a summary at its trigger, while one run late costs a
 * worker's call (bench/queue.ts, lockstep: the pace measured between calls put the deadline
 * 2 s early for jobs that were used).
 */
export const DEADLINE_MARGIN = 2;
/** Weight of a new delta in the growth EWMAs. */
const ALPHA = 0.3;
/** A gap longer than this between two calls is an idle pause, not a call's time. */
const IDLE_MS = 300_000;
/** Sessions whose growth is remembered at most (the oldest go first). */
const MAX_SESSIONS = 10_000;

interface Growth {
  version: number;
  tokens: number;
  at: number;
  tokensPerCall: number | undefined;
  msPerCall: number | undefined;
}

/** Where a session's next preparation starts, and why. */
export interface PreparationThreshold {
  /** Tokens from which a preparation starts (calibrated units, as the trigger). */
  readonly tokens: number;
  /** `learned`: from the lead time and the session's growth; `fixed`: `policy.prepareAtPct`. */
  readonly basis: 'learned' | 'fixed';
  /** The lead time it is made for, in milliseconds (learned only). */
  readonly leadMs?: number;
  /** Calls ahead of the trigger it starts (learned only). */
  readonly callsAhead?: number;
}

/** A manager's lead-time learning (see the module's comment). */
export class LeadTime {
  readonly #latencies: number[] = [];
  #published = 0;
  readonly #growth = new Map<string, Growth>();

  /** Records a call of `key` at `tokens` on summary version `version`, at `now` (epoch ms). */
  recordCall(key: string, version: number, tokens: number, now: number): void {
    const previous = this.#growth.get(key);
    this.#growth.delete(key);
    const next: Growth = previous
      ? { ...previous, version, tokens, at: now }
      : { version, tokens, at: now, tokensPerCall: undefined, msPerCall: undefined };
    if (previous && previous.version === version && tokens > previous.tokens) {
      const gap = now - previous.at;
      next.tokensPerCall = ewma(previous.tokensPerCall, tokens - previous.tokens);
      if (gap > 0 && gap < IDLE_MS) next.msPerCall = ewma(previous.msPerCall, gap);
    }
    this.#growth.set(key, next);
    if (this.#growth.size > MAX_SESSIONS) this.#growth.delete(this.#growth.keys().next().value as string);
  }

  /** The summary version of `key`'s latest call; `undefined` when none is remembered. */
  version(key: string): number | undefined {
    return this.#growth.get(key)?.version;
  }

  /** Forgets a session's growth (its session ended). */
  forget(key: string): void {
    this.#growth.delete(key);
  }

  /** A preparation was ready `ms` after it started (`late`: still not ready after `ms`). */
  recordLatency(ms: number, late = false): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (!late) this.#published++;
    this.#latencies.push(late ? ms * LATE_FACTOR : ms);
    if (this.#latencies.length > LATENCY_SAMPLES) this.#latencies.shift();
  }

  /** The p90 of the recent latency samples, in milliseconds (`undefined`: none yet). */
  latencyMs(quantile = 0.9): number | undefined {
    if (this.#latencies.length === 0) return undefined;
    const sorted = [...this.#latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * quantile))];
  }

  /** The lead time a preparation is started for, in milliseconds (`undefined`: nothing learned). */
  leadMs(): number | undefined {
    const latency = this.latencyMs();
    return latency === undefined ? undefined : Math.round(latency * MARGIN);
  }

  /**
   * Where `key`'s next preparation starts: `trigger` minus the growth of a lead time of calls
   * (and one call more: the trigger is checked per call), between `floor` (where a session is
   * after a compaction) and one call's growth under the trigger; `fixed` until both the
   * latency and the session's growth are known.
   */
  threshold(key: string, trigger: number, floor: number, fixed: number): PreparationThreshold {
    const growth = this.#growth.get(key);
    const leadMs = this.leadMs();
    if (leadMs === undefined || growth?.tokensPerCall === undefined || growth.msPerCall === undefined)
      return { tokens: fixed, basis: 'fixed' };
    const callsAhead = Math.ceil(leadMs / growth.msPerCall) + 1;
    const upper = trigger - growth.tokensPerCall;
    const tokens = Math.max(floor, Math.min(upper, trigger - callsAhead * growth.tokensPerCall));
    return { tokens: Math.floor(tokens), basis: 'learned', leadMs, callsAhead };
  }

  /**
   * Milliseconds until `key`, at `tokens`, has surely reached `trigger`: the calls left at its
   * current pace, times the time per call, times {@link DEADLINE_MARGIN}; `undefined` while
   * its growth is not known.
   */
  untilTrigger(key: string, tokens: number, trigger: number): number | undefined {
    const expected = this.expectedUntilTrigger(key, tokens, trigger);
    return expected === undefined ? undefined : expected * DEADLINE_MARGIN;
  }

  /**
   * Milliseconds until `key`, at `tokens`, likely reaches `trigger`: the calls left at its
   * current pace times the time per call (no margin); `undefined` while its growth is not known.
   */
  expectedUntilTrigger(key: string, tokens: number, trigger: number): number | undefined {
    const growth = this.#growth.get(key);
    if (!growth?.tokensPerCall || !growth.msPerCall) return undefined;
    const calls = Math.max(1, Math.ceil((trigger - tokens) / growth.tokensPerCall));
    return calls * growth.msPerCall;
  }

  /**
   * True when `key`, at `tokens`, reaches `trigger` before a preparation started now would
   * likely be ready (the median latency): its job would most likely be dropped unused. Never
   * true before a preparation was seen published (a stopped queue must still get jobs).
   */
  tooLate(key: string, tokens: number, trigger: number): boolean {
    const growth = this.#growth.get(key);
    const latency = this.latencyMs(0.5);
    if (this.#published === 0 || latency === undefined || !growth?.tokensPerCall || !growth.msPerCall)
      return false;
    const callsLeft = Math.ceil((trigger - tokens) / growth.tokensPerCall);
    return callsLeft * growth.msPerCall < latency;
  }
}

function ewma(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous + ALPHA * (sample - previous);
}

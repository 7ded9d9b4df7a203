/**
 * Step 4: decide. Compaction triggers when the request reaches `triggerPct` of the window
 * (never within a tenth of the window of what the last compaction left), when the growth
 * since the last compaction has paid for a rewrite in cache reads (`policy.costTrigger`),
 * exceeds the budget, or is forced, or, after an idle gap longer than the prompt cache's
 * lifetime (the cache is cold: a rewrite costs nothing extra), from `prepareAtPct`; it then reduces down to the target (`targetPct` of the
 * window, well below the trigger), so the next trigger is many steps away.
 */
import type { CompactPolicy } from '../policy.js';

/**
 * A per-call option, not public: the request's real hard limit when the policy's budget is
 * aimed below it. compactMessages compacts with the target as the budget (everything else is
 * cut to it) and `maxTokens` as this limit, under which the newest message stays whole.
 */
export const HARD_LIMIT: unique symbol = Symbol('agent-compaction.hardLimit');

/** The hard limit a call's options carry ({@link HARD_LIMIT}), if any. */
export function hardLimitOf(options: object): number | undefined {
  const limit = (options as { [HARD_LIMIT]?: unknown })[HARD_LIMIT];
  return typeof limit === 'number' && Number.isFinite(limit) ? limit : undefined;
}

/**
 * A session's pace since its last compaction (`policy.costTrigger`), from its stored state: the
 * request's tokens that compaction left (the trough) and the messages appended since.
 */
export interface CallPace {
  /** Tokens of the request the last compaction left (undefined before the first one). */
  readonly trough: number | undefined;
  /** Messages of the view after the newest one that compaction kept (the whole view before a first one). */
  readonly appended: number;
}

/** The price ratio the cost trigger weighs: a cache write over a cache read. */
export interface CachePriceRatio {
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

/** The least price ratio (a cache write over a read) the cost trigger weighs a compaction at. */
export const MIN_WRITE_TO_READ = 10;

/** The least a compaction triggered by the policy must be able to free: a tenth of the window. */
export const MIN_FREE_SHARE = 0.1;

/** The decision of one preflight. */
export interface Decision {
  triggered: boolean;
  reason:
    | 'manual'
    | 'usage_pct >= trigger_pct'
    | 'over budget'
    | 'cache cold'
    | 'growth paid a rewrite'
    | 'usage_pct < trigger_pct';
  /** `maxContextTokens - hardCapBuffer`: the hard limit. */
  budget: number;
  /**
   * What the request may take with its newest message whole: the budget, unless the caller
   * aimed the budget below its real limit ({@link HARD_LIMIT}: compactMessages aims it at the
   * target). Only the newest message, sent as given, keeps a request between the two.
   */
  limit: number;
  /** Where compaction triggers. */
  triggerTokens: number;
  /** Where compaction aims (a soft limit). */
  targetTokens: number;
}

/** What {@link decide} weighs besides the request's tokens. */
export interface DecideContext {
  readonly force: boolean;
  readonly coldCache?: boolean;
  readonly hardLimit?: number | undefined;
  /** The session's measured pace (no pace: the trigger only, as before the first call). */
  readonly pace?: CallPace | undefined;
  readonly price?: CachePriceRatio | undefined;
}

type DecidePolicy = Pick<
  CompactPolicy,
  'triggerPct' | 'targetPct' | 'hardCapBuffer' | 'prepareAtPct' | 'costTrigger'
>;

/**
 * The trigger in tokens: `triggerPct` of the window, but never within a tenth of the window
 * of what the last compaction left (a compaction that cannot free that much would run again on
 * the next call: thrashing), and never above the budget.
 */
function triggerOf(policy: DecidePolicy, maxContextTokens: number, budget: number, pace?: CallPace): number {
  const trigger = Math.floor(policy.triggerPct * maxContextTokens);
  if (pace?.trough === undefined) return trigger;
  return Math.min(budget, Math.max(trigger, pace.trough + Math.floor(MIN_FREE_SHARE * maxContextTokens)));
}

/**
 * The cost trigger (`policy.costTrigger`), a target that follows the window and the measured
 * growth: once the cache reads of the growth since the last compaction cost as much as writing
 * its trough again (the rent-or-buy rule: it compacts about sqrt(2 x growth per call x trough x
 * write / read) above the trough), provided the request is at least a tenth of the window
 * above it. The reads are the growth's tokens over the calls since, each call about two
 * messages (a call and its result, or a question and its answer) growing the request evenly:
 * (calls x growth / 2) x read >= trough x write.
 */
function growthPaid(tokens: number, policy: DecidePolicy, max: number, context: DecideContext): boolean {
  const { pace, price } = context;
  if (!policy.costTrigger || !pace || !price || !(price.cacheRead > 0)) return false;
  // Before the first compaction, its trough is guessed at a tenth of the window.
  const trough = pace.trough ?? Math.floor(MIN_FREE_SHARE * max);
  const growth = tokens - trough;
  if (growth < Math.floor(MIN_FREE_SHARE * max)) return false;
  const calls = pace.appended / 2;
  // A compaction costs more than its cache write (a summarizer call, what the model no longer
  // sees): weighed at least as ten reads, as where reads cost a tenth of a write.
  const ratio = Math.max(MIN_WRITE_TO_READ, price.cacheWrite / price.cacheRead);
  return (calls * growth) / 2 >= trough * ratio;
}

/** Decides whether a request of `tokens` compacts. */
export function decide(
  tokens: number,
  policy: DecidePolicy,
  maxContextTokens: number,
  context: DecideContext,
): Decision {
  // A per-call limit smaller than the buffer (overflow recovery) keeps a tenth of it as buffer.
  const buffer =
    policy.hardCapBuffer < maxContextTokens ? policy.hardCapBuffer : Math.floor(maxContextTokens * 0.1);
  const budget = maxContextTokens - buffer;
  const triggerTokens = triggerOf(policy, maxContextTokens, budget, context.pace);
  let targetTokens = Math.min(Math.floor(policy.targetPct * maxContextTokens), budget);
  const reason = context.force
    ? 'manual'
    : tokens >= triggerTokens
      ? 'usage_pct >= trigger_pct'
      : tokens > budget
        ? 'over budget'
        : context.coldCache && tokens >= Math.floor(policy.prepareAtPct * maxContextTokens)
          ? 'cache cold'
          : growthPaid(tokens, policy, maxContextTokens, context)
            ? 'growth paid a rewrite'
            : 'usage_pct < trigger_pct';
  // Early triggers aim below the request: at least a tenth of the window freed.
  if (reason === 'growth paid a rewrite')
    targetTokens = Math.min(targetTokens, tokens - Math.floor(MIN_FREE_SHARE * maxContextTokens));
  const limit = Math.max(budget, Math.min(context.hardLimit ?? budget, maxContextTokens));
  return {
    triggered: reason !== 'usage_pct < trigger_pct',
    reason,
    budget,
    limit,
    triggerTokens,
    targetTokens,
  };
}

/** The share of the whole ratio's limit below which the marginal fit never takes it (see {@link toLocal}). */
const MIN_FIT_SHARE = 0.8;

/** A calibrated count next to the local estimate it came from (see `UsageCalibration.count`). */
export interface LocalFit {
  /** The local estimate of the request. */
  local: number;
  /** Its calibrated count. */
  tokens: number;
  /** The ratio that scales what changes (the session's marginal ratio). */
  marginal: number;
}

/**
 * A decision's limits in local-counter units. The target scales by the whole request's ratio
 * (`scale`). The budget and the limit, hard, take the lower of that and of the count less what
 * is removed at the marginal ratio (`fit`): what compaction removes (old outputs) is of the kind
 * that grew, and what it keeps (a system prompt, tool schemas) may weigh more per estimated
 * token than the whole request's ratio says (bench: a system prompt of rules took requests 4%
 * over the window by the provider's count under the whole ratio).
 */
export function toLocal(decision: Decision, scale: number, fit?: LocalFit): Decision {
  const local = (tokens: number) => {
    const proportional = Math.floor(tokens / scale);
    if (!fit || !(fit.marginal > 0) || tokens >= fit.tokens) return proportional;
    const marginal = Math.floor(fit.local - (fit.tokens - tokens) / fit.marginal);
    // At most MIN_FIT_SHARE below the whole ratio's: a marginal ratio learned on small growth,
    // applied to a request far over its budget, would otherwise leave no room at all (a budget
    // of 0 fails the call: nothing pinned fits).
    return Math.max(Math.floor(proportional * MIN_FIT_SHARE), Math.min(proportional, marginal));
  };
  const budget = local(decision.budget);
  return {
    ...decision,
    budget,
    limit: local(decision.limit),
    targetTokens: Math.min(budget, Math.floor(decision.targetTokens / scale)),
  };
}

/**
 * Step 4: decide. Compaction triggers when the request reaches `triggerPct` of the window,
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

/** The decision of one preflight. */
export interface Decision {
  triggered: boolean;
  reason: 'manual' | 'usage_pct >= trigger_pct' | 'over budget' | 'cache cold' | 'usage_pct < trigger_pct';
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

/** Decides whether a request of `tokens` compacts. */
export function decide(
  tokens: number,
  policy: Pick<CompactPolicy, 'triggerPct' | 'targetPct' | 'hardCapBuffer' | 'prepareAtPct'>,
  maxContextTokens: number,
  force: boolean,
  coldCache = false,
  hardLimit?: number,
): Decision {
  // A per-call limit smaller than the buffer (overflow recovery) keeps a tenth of it as buffer.
  const buffer =
    policy.hardCapBuffer < maxContextTokens ? policy.hardCapBuffer : Math.floor(maxContextTokens * 0.1);
  const budget = maxContextTokens - buffer;
  const triggerTokens = Math.floor(policy.triggerPct * maxContextTokens);
  const targetTokens = Math.min(Math.floor(policy.targetPct * maxContextTokens), budget);
  const reason = force
    ? 'manual'
    : tokens >= triggerTokens
      ? 'usage_pct >= trigger_pct'
      : tokens > budget
        ? 'over budget'
        : coldCache && tokens >= Math.floor(policy.prepareAtPct * maxContextTokens)
          ? 'cache cold'
          : 'usage_pct < trigger_pct';
  const limit = Math.max(budget, Math.min(hardLimit ?? budget, maxContextTokens));
  return {
    triggered: reason !== 'usage_pct < trigger_pct',
    reason,
    budget,
    limit,
    triggerTokens,
    targetTokens,
  };
}

/** A decision's limits in local-counter units. */
export function toLocal(decision: Decision, scale: number): Decision {
  return {
    ...decision,
    budget: Math.floor(decision.budget / scale),
    limit: Math.floor(decision.limit / scale),
    targetTokens: Math.floor(decision.targetTokens / scale),
  };
}

/**
 * Step 4: decide. Compaction triggers when the request reaches `triggerPct` of the window,
 * exceeds the budget, or is forced, or, after an idle gap longer than the prompt cache's
 * lifetime (the cache is cold: a rewrite costs nothing extra), from `prepareAtPct`; it then reduces down to the target (`targetPct` of the
 * window, well below the trigger), so the next trigger is many steps away.
 */
import type { CompactPolicy } from '../policy.js';

/** The decision of one preflight. */
export interface Decision {
  triggered: boolean;
  reason: 'manual' | 'usage_pct >= trigger_pct' | 'over budget' | 'cache cold' | 'usage_pct < trigger_pct';
  /** `maxContextTokens - hardCapBuffer`: the hard limit. */
  budget: number;
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
  return { triggered: reason !== 'usage_pct < trigger_pct', reason, budget, triggerTokens, targetTokens };
}

/** A decision's limits in local-counter units. */
export function toLocal(decision: Decision, scale: number): Decision {
  return {
    ...decision,
    budget: Math.floor(decision.budget / scale),
    targetTokens: Math.floor(decision.targetTokens / scale),
  };
}

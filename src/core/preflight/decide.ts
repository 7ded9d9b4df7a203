/**
 * Step 4: decide. Compaction triggers when the request reaches `triggerPct` of the window,
 * exceeds the budget, or is forced; it then reduces down to the target (`targetPct` of the
 * window, well below the trigger), so the next trigger is many steps away.
 */
import type { CompactPolicy } from '../policy.js';

/** The decision of one preflight. */
export interface Decision {
  triggered: boolean;
  reason: 'manual' | 'usage_pct >= trigger_pct' | 'over budget' | 'usage_pct < trigger_pct';
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
  policy: Pick<CompactPolicy, 'triggerPct' | 'targetPct' | 'hardCapBuffer'>,
  maxContextTokens: number,
  force: boolean,
): Decision {
  const budget = maxContextTokens - policy.hardCapBuffer;
  const triggerTokens = Math.floor(policy.triggerPct * maxContextTokens);
  const targetTokens = Math.min(Math.floor(policy.targetPct * maxContextTokens), budget);
  const reason = force
    ? 'manual'
    : tokens >= triggerTokens
      ? 'usage_pct >= trigger_pct'
      : tokens > budget
        ? 'over budget'
        : 'usage_pct < trigger_pct';
  return { triggered: reason !== 'usage_pct < trigger_pct', reason, budget, triggerTokens, targetTokens };
}

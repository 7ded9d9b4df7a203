/**
 * Part of step 7: what a compaction that landed says beyond its result (issue 34): whether it
 * ended above its target (on the decision event), and when a session stays on the fallback
 * summarizer (one warning per streak).
 */

import { EmbeddedSummarizer } from '../../summary/embedded-summarizer.js';
import { MIN_FREE_SHARE } from '../decide.js';
import type { PipelineDeps, PreparedRequest } from '../prepare-request.js';
import type { CascadeResult } from '../run-cascade.js';

/** What the decision event says of a compaction that ended above its target (issue 34). */
export function overTarget(prepared: PreparedRequest, cascade: CascadeResult) {
  const target = prepared.localDecision.targetTokens;
  if (cascade.tokensAfter <= target) return {};
  const entries = cascade.entries;
  const round = entries.at(-1)?.round ?? -1;
  let latest = 0;
  for (let k = entries.length - 1; k >= 0; k--) {
    const entry = entries[k]!;
    if (k < entries.length - 1 && (round < 0 || entry.round !== round)) break;
    latest += entry.tokens;
  }
  const scale = prepared.scale;
  return {
    overTarget: {
      tokensAfter: Math.ceil(cascade.tokensAfter * scale),
      latestRoundTokens: Math.ceil(latest * scale),
    },
  };
}

/** Consecutive compactions written by a fallback before a session is said to be stuck on it. */
const STUCK_AFTER = 3;

/**
 * Counts the session's compactions in a row whose configured summarizer failed, and says once,
 * with one `summarizer_stuck` warning, when a session stays on the fallback (issue 34); a
 * summary by the configured summarizer ends the streak.
 */
export function noteFallbackStreak(
  deps: PipelineDeps,
  prepared: PreparedRequest,
  cascade: CascadeResult,
): void {
  const summary = cascade.summary;
  if (!summary || deps.chain.length < 2 || summary.summarizer === 'previous') return;
  const streaks = deps.fallbackStreaks;
  if (!summary.fallback) {
    streaks.delete(prepared.key);
    return;
  }
  const streak = (streaks.get(prepared.key) ?? 0) + 1;
  if (streaks.size >= 10_000 && !streaks.has(prepared.key)) streaks.clear();
  streaks.set(prepared.key, streak);
  if (streak !== STUCK_AFTER) return;
  deps.bus.emit(
    prepared.context,
    'compact.warning',
    {
      code: 'summarizer_stuck',
      message: `session "${prepared.context.sessionId}": the last ${streak} summaries were written by the fallback (${summary.fallback}), not by ${deps.chain[0]!.name}; see the compact.error events for why`,
      context: { streak, summarizer: deps.chain[0]!.name, fallback: summary.fallback },
    },
    { start: Date.now(), ...(prepared.decisionSpanId ? { parentId: prepared.decisionSpanId } : {}) },
  );
}

/**
 * A compaction not worth its rewrite (`policy.clearAtLeast`; a tenth of the window when the
 * growth triggered it): no summary, less freed than the minimum, and the request fits the
 * budget as it is. Manual compactions always apply.
 */
export function freesTooLittle(prepared: PreparedRequest, cascade: CascadeResult): boolean {
  const early = prepared.decision.reason === 'growth paid a rewrite';
  const min = Math.max(
    prepared.policy.clearAtLeast,
    early ? Math.floor(MIN_FREE_SHARE * prepared.maxContextTokens) : 0,
  );
  if (!(min > 0) || prepared.options.force || cascade.summary) return false;
  // In the request's (calibrated) tokens, as the option and the results speak.
  const freed = (prepared.localTokensBefore - cascade.tokensAfter) * prepared.scale;
  return freed < min && prepared.localTokensBefore <= prepared.localDecision.budget;
}

/**
 * An early compaction (the cost trigger) with a summarizer of the caller's only clears
 * (run-cascade.ts), and pays only while clearing alone can still bring the next trigger's
 * compaction under the target. What it leaves grows until that trigger by the share of the
 * request clearing could not take back (text, calls, placeholders, the newest results); when
 * that reaches the target, the trigger summarizes whatever the early clear did, and clearing
 * early only spent the results that trigger would have cleared, moving the summaries earlier
 * (at 8k, outputs 2x/4x: 14/18 summarizer calls in 300 with the trigger on against 11/17 off;
 * bench/paid-summarizer-early.ts). Declined then: the session waits for the trigger.
 */
export function spendsTriggerReserve(
  deps: Pick<PipelineDeps, 'chain'>,
  prepared: PreparedRequest,
  cascade: CascadeResult,
): boolean {
  const { decision, maxContextTokens, policy } = prepared;
  if (decision.reason !== 'growth paid a rewrite' || deps.chain[0] instanceof EmbeddedSummarizer)
    return false;
  if (cascade.summary || prepared.options.force) return false;
  const before = prepared.tokensBefore;
  const after = cascade.tokensAfter * prepared.scale;
  const target = Math.min(Math.floor(policy.targetPct * maxContextTokens), decision.budget);
  // The share of each token of growth that stays after clearing (0 when clearing took it all).
  const stays = Math.min(1, after / before);
  return after + stays * Math.max(0, decision.triggerTokens - after) > target;
}

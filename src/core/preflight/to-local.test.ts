import { describe, expect, it } from 'vitest';
import { type Decision, toLocal } from './decide.js';

const decision: Decision = {
  triggered: true,
  reason: 'over budget',
  budget: 6300,
  limit: 6800,
  triggerTokens: 5600,
  targetTokens: 4000,
};

/**
 * A request of two kinds of text: `kept` local tokens weighing `keptRatio` provider tokens each
 * (a system prompt), `grown` weighing `grownRatio` (the outputs that grew and that compaction
 * removes). Calibration knows the whole count and the growth's (marginal) ratio.
 */
function request(kept: number, keptRatio: number, grown: number, grownRatio: number) {
  const local = kept + grown;
  const tokens = kept * keptRatio + grown * grownRatio;
  return {
    local,
    tokens,
    scale: tokens / local,
    provider: (after: number) => kept * keptRatio + (after - kept) * grownRatio,
  };
}

describe('toLocal', () => {
  it('keeps the hard limit by the provider count when what is kept weighs more than the whole ratio says', () => {
    // The figures of the Anthropic loop under a system prompt of rules (issue 47ba review).
    const r = request(5400, 0.8, 5095, 0.54);
    const local = toLocal(decision, r.scale, { local: r.local, tokens: r.tokens, marginal: 0.54 });
    // Compaction removes outputs until the request is at the local limit.
    expect(r.provider(local.limit)).toBeLessThanOrEqual(decision.limit);
    expect(r.provider(local.budget)).toBeLessThanOrEqual(decision.budget);
    // By the whole ratio alone it went over.
    expect(r.provider(Math.floor(decision.limit / r.scale))).toBeGreaterThan(decision.limit);
  });

  it('keeps the whole ratio when it is the lower (what is removed weighs more than the growth)', () => {
    const r = request(5400, 0.5, 5095, 0.9);
    const local = toLocal(decision, r.scale, { local: r.local, tokens: r.tokens, marginal: 0.9 });
    expect(local.limit).toBe(Math.floor(decision.limit / r.scale));
    expect(r.provider(local.limit)).toBeLessThanOrEqual(decision.limit);
  });

  it('scales by the whole ratio without a fit, the target never above the budget', () => {
    expect(toLocal(decision, 0.5)).toMatchObject({ budget: 12_600, limit: 13_600, targetTokens: 8000 });
    const r = request(5400, 0.8, 5095, 0.54);
    const local = toLocal(decision, r.scale, { local: r.local, tokens: r.tokens, marginal: 0.2 });
    expect(local.targetTokens).toBeLessThanOrEqual(local.budget);
    expect(local.budget).toBeGreaterThanOrEqual(0);
  });

  it('never takes the limits far below the whole ratio, however far over the request is', () => {
    // A request of three times its budget after a large output, the marginal ratio learned on
    // small growth a fifth of the whole: the fit alone leaves a budget of 0 (nothing fits).
    const r = request(5400, 0.8, 40_000, 0.54);
    const local = toLocal(decision, r.scale, { local: r.local, tokens: r.tokens, marginal: 0.1 });
    expect(r.local - (r.tokens - decision.budget) / 0.1).toBeLessThan(0);
    expect(local.budget).toBeGreaterThanOrEqual(Math.floor(Math.floor(decision.budget / r.scale) * 0.8));
    expect(local.limit).toBeGreaterThan(local.budget);
  });
});

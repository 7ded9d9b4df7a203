import { describe, expect, it } from 'vitest';
import { isCompactError } from './errors.js';
import { overridePolicy, POLICY_PRESETS, resolvePolicy } from './policy.js';

describe('policy presets (issue 34, point 6)', () => {
  it('the default is the cost-priced policy (issue 47); quality keeps the old defaults; cost keeps 3 results', () => {
    expect(resolvePolicy()).toMatchObject({
      preset: 'default',
      triggerPct: 0.85,
      targetPct: 0.5,
      cacheAware: true,
      costTrigger: true,
      clearKeepRecent: 4,
    });
    expect(resolvePolicy({ preset: 'quality' })).toMatchObject({
      triggerPct: 0.85,
      targetPct: 0.5,
      cacheAware: false,
      costTrigger: false,
      clearKeepRecent: 3,
    });
    expect(resolvePolicy({ preset: 'cost' })).toMatchObject({
      cacheAware: true,
      costTrigger: true,
      clearKeepRecent: 3,
    });
    expect(POLICY_PRESETS.cost).toEqual({ clearKeepRecent: 3 });
  });

  it('keys set beside the preset win over it', () => {
    expect(resolvePolicy({ preset: 'quality', cacheAware: true })).toMatchObject({
      cacheAware: true,
      costTrigger: false,
    });
    expect(resolvePolicy({ preset: 'cost', clearKeepRecent: 6 }).clearKeepRecent).toBe(6);
    // A trigger below the default target: the target follows it down, as without a preset.
    expect(resolvePolicy({ preset: 'cost', triggerPct: 0.15 }).targetPct).toBeCloseTo(0.09);
  });

  it("an agent's override naming a preset takes its values over the base policy's", () => {
    const base = resolvePolicy({ keepRecentTurns: 3 });
    expect(overridePolicy(base, [{ preset: 'quality' }])).toMatchObject({
      cacheAware: false,
      costTrigger: false,
      keepRecentTurns: 3,
    });
    expect(overridePolicy(resolvePolicy({ preset: 'quality' }), [{ keepRecentTurns: 2 }])).toMatchObject({
      costTrigger: false,
      keepRecentTurns: 2,
    });
  });

  it('an unknown preset is an invalid_config error naming policy.preset', () => {
    let caught: unknown;
    try {
      resolvePolicy({ preset: 'cheap' as never });
    } catch (error) {
      caught = error;
    }
    expect(isCompactError(caught, 'invalid_config')).toBe(true);
    expect(String((caught as Error).message)).toContain('policy.preset');
    expect(String((caught as Error).message)).toContain('default, quality, cost');
  });
});

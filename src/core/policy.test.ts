import { describe, expect, it } from 'vitest';
import { isCompactError } from './errors.js';
import { overridePolicy, POLICY_PRESETS, resolvePolicy } from './policy.js';

describe('policy presets (issue 34, point 6)', () => {
  it("'cost' compacts at 0.4 of the window down to 0.2; the default stays quality-first", () => {
    expect(resolvePolicy({ preset: 'cost' })).toMatchObject({
      preset: 'cost',
      triggerPct: 0.4,
      targetPct: 0.2,
      cacheAware: true,
    });
    expect(resolvePolicy()).toMatchObject({ preset: 'quality', triggerPct: 0.85, targetPct: 0.5 });
    expect(POLICY_PRESETS.cost).toEqual({ triggerPct: 0.4, targetPct: 0.2, cacheAware: true });
    // The background preparation moves below the lower trigger.
    expect(resolvePolicy({ preset: 'cost' }).prepareAtPct).toBeCloseTo(0.32);
  });

  it('keys set beside the preset win over it', () => {
    expect(resolvePolicy({ preset: 'cost', targetPct: 0.3 })).toMatchObject({
      triggerPct: 0.4,
      targetPct: 0.3,
    });
    expect(resolvePolicy({ preset: 'cost', triggerPct: 0.6 })).toMatchObject({
      triggerPct: 0.6,
      targetPct: 0.2,
    });
    // A trigger below the preset's target: the target follows it down, as without a preset.
    expect(resolvePolicy({ preset: 'cost', triggerPct: 0.15 }).targetPct).toBeCloseTo(0.09);
  });

  it("an agent's override naming a preset takes its values over the base policy's", () => {
    const base = resolvePolicy({ keepRecentTurns: 3 });
    expect(overridePolicy(base, [{ preset: 'cost' }])).toMatchObject({
      triggerPct: 0.4,
      targetPct: 0.2,
      keepRecentTurns: 3,
    });
    expect(overridePolicy(resolvePolicy({ preset: 'cost' }), [{ keepRecentTurns: 2 }])).toMatchObject({
      triggerPct: 0.4,
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
    expect(String((caught as Error).message)).toContain('quality, cost');
  });
});

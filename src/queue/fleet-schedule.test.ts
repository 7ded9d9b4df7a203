import { describe, expect, it } from 'vitest';
import { holdUntil, MIN_HOLD_MS, RECHECK_MS } from './fleet-schedule.js';

const NOW = 1_000_000;

describe('holdUntil (the latest start of a job on the fleet schedule)', () => {
  it('runs at once a job due within two runs, and holds one due later, looked at again within RECHECK_MS', () => {
    expect(holdUntil(NOW + 900, NOW, { slots: 2, later: [] }, 500)).toBeUndefined();
    expect(holdUntil(NOW + 1000 + MIN_HOLD_MS - 1, NOW, { slots: 2, later: [] }, 500)).toBeUndefined();
    // Published a run and a quarter of the time to it before it is due: 2000 - 500 - 500 - 500.
    expect(holdUntil(NOW + 2000, NOW, { slots: 2, later: [] }, 500)).toBe(NOW + 500);
    expect(holdUntil(NOW + 60_000, NOW, { slots: 2, later: [] }, 500)).toBe(NOW + RECHECK_MS);
  });

  it('starts earlier when jobs due right after it would not fit the slots', () => {
    const alone = holdUntil(NOW + 1_800, NOW, { slots: 1, later: [] }, 400);
    // Three more jobs due 100 ms after it, one slot: it runs first, four runs before the last is due.
    const crowded = holdUntil(
      NOW + 1_800,
      NOW,
      { slots: 1, later: [1_900, 1_900, 1_900].map((d) => NOW + d) },
      400,
    );
    expect(alone).toBe(NOW + 550);
    expect(crowded).toBeUndefined();
    // With four slots they run side by side: no earlier than alone.
    expect(
      holdUntil(NOW + 1_800, NOW, { slots: 4, later: [1_900, 1_900, 1_900].map((d) => NOW + d) }, 400),
    ).toBe(NOW + 550);
  });

  it('never starts a job due sooner after one due later (earliest due first)', () => {
    const dues = [1_000, 1_100, 1_150, 1_300, 1_350, 1_800].map((d) => NOW + d);
    const starts = dues.map((due, i) => {
      const start = holdUntil(due, NOW, { slots: 2, later: dues.slice(i + 1) }, 100);
      return start ?? NOW;
    });
    expect(new Set(starts).size).toBeGreaterThan(2);
    for (let i = 1; i < starts.length; i++) expect(starts[i]!).toBeGreaterThanOrEqual(starts[i - 1]!);
  });
});

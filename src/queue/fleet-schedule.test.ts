import { describe, expect, it } from 'vitest';
import { holdUntil, MIN_HOLD_MS, RECHECK_MS, type RunPlan } from './fleet-schedule.js';

const NOW = 1_000_000;

/** Runs of `runMs`, a run's margin for their spread and a quarter of the time to a due time for its error. */
const plan = (runMs: number, spreadMs = runMs, driftShare = 0.25): RunPlan => ({
  runMs,
  spreadMs,
  driftShare,
});

describe('holdUntil (the latest start of a job on the fleet schedule)', () => {
  it('runs at once a job due within two runs, and holds one due later, looked at again within RECHECK_MS', () => {
    expect(holdUntil(NOW + 900, NOW, { slots: 2, later: [] }, plan(500))).toBeUndefined();
    expect(holdUntil(NOW + 1000 + MIN_HOLD_MS - 1, NOW, { slots: 2, later: [] }, plan(500))).toBeUndefined();
    // Published a run's spread and a quarter of the time to it before it is due: 2000 - 500 - 500 - 500.
    expect(holdUntil(NOW + 2000, NOW, { slots: 2, later: [] }, plan(500))).toBe(NOW + 500);
    expect(holdUntil(NOW + 60_000, NOW, { slots: 2, later: [] }, plan(500))).toBe(NOW + RECHECK_MS);
  });

  it('starts later with a narrower spread of run times and a smaller learned drift of due times', () => {
    // 1500 - 500 (run) - 100 (spread) - 0.05 x 1500 (drift); with the old margins, run now.
    expect(holdUntil(NOW + 1500, NOW, { slots: 2, later: [] }, plan(500, 100, 0.05))).toBe(NOW + 825);
    expect(holdUntil(NOW + 1500, NOW, { slots: 2, later: [] }, plan(500))).toBeUndefined();
    // A wider drift starts it earlier: 1500 - 500 - 100 - 0.4 x 1500.
    expect(holdUntil(NOW + 1500, NOW, { slots: 2, later: [] }, plan(500, 100, 0.4))).toBe(NOW + 300);
  });

  it('starts earlier when jobs due right after it would not fit the slots', () => {
    const alone = holdUntil(NOW + 1_800, NOW, { slots: 1, later: [] }, plan(400));
    // Three more jobs due 100 ms after it, one slot: it runs first, four runs before the last is due.
    const crowded = holdUntil(
      NOW + 1_800,
      NOW,
      { slots: 1, later: [1_900, 1_900, 1_900].map((d) => NOW + d) },
      plan(400),
    );
    expect(alone).toBe(NOW + 550);
    expect(crowded).toBeUndefined();
    // With four slots they run side by side: no earlier than alone.
    expect(
      holdUntil(NOW + 1_800, NOW, { slots: 4, later: [1_900, 1_900, 1_900].map((d) => NOW + d) }, plan(400)),
    ).toBe(NOW + 550);
  });

  it('widens the run margin with the rounds a backlog needs: the spread of r runs in a row, times the square root of r', () => {
    // One slot, three more jobs due with it: the last is published after four runs in a row,
    // with a spread of 100 x sqrt(4) (not 100 once): 2600 - 200 - 4 x 400.
    const later = [2_600, 2_600, 2_600].map((d) => NOW + d);
    expect(holdUntil(NOW + 2_600, NOW, { slots: 1, later }, plan(400, 100, 0))).toBe(NOW + 800);
    // Side by side on four slots, one round each: the spread once (1400 - 100 - 400).
    expect(holdUntil(NOW + 1_400, NOW, { slots: 4, later }, plan(400, 100, 0))).toBe(NOW + 900);
  });

  it('never starts a job due sooner after one due later (earliest due first)', () => {
    const dues = [1_000, 1_100, 1_150, 1_300, 1_350, 1_800].map((d) => NOW + d);
    const starts = dues.map((due, i) => {
      const start = holdUntil(due, NOW, { slots: 2, later: dues.slice(i + 1) }, plan(100));
      return start ?? NOW;
    });
    expect(new Set(starts).size).toBeGreaterThan(2);
    for (let i = 1; i < starts.length; i++) expect(starts[i]!).toBeGreaterThanOrEqual(starts[i - 1]!);
  });
});

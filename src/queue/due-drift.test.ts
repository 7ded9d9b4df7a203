import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DRIFT_SHARE,
  DueDrift,
  MAX_DRIFT_SHARE,
  MIN_DRIFT_SAMPLES,
  MIN_DRIFT_WAIT_MS,
} from './due-drift.js';

describe("DueDrift (how far the schedule's due times came earlier while jobs waited)", () => {
  it('keeps the default share until enough samples, then learns a steady pace as a small share', () => {
    const drift = new DueDrift();
    for (let i = 0; i < MIN_DRIFT_SAMPLES - 1; i++)
      drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 4_980 });
    expect(drift.share()).toBe(DEFAULT_DRIFT_SHARE);
    drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 4_980 });
    // 20 ms earlier over 4 s of waiting.
    expect(drift.share()).toBeCloseTo(0.005);
  });

  it('takes the p90 of the samples: a few sessions speeding up widen the margin', () => {
    const drift = new DueDrift();
    for (let i = 0; i < 18; i++) drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 5_200 });
    for (let i = 0; i < 2; i++) drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 3_800 });
    // Later due times count as no drift; 1.2 s earlier over 4 s waited is 0.3.
    expect(drift.share()).toBeCloseTo(0.3);
  });

  it('skips readings too close together, and caps an outlier', () => {
    const drift = new DueDrift();
    drift.record({ at: 0, dueAt: 5_000 }, { at: MIN_DRIFT_WAIT_MS - 1, dueAt: 0 });
    expect(drift.samples).toBe(0);
    for (let i = 0; i < MIN_DRIFT_SAMPLES; i++)
      drift.record({ at: 0, dueAt: 60_000 }, { at: 1_000, dueAt: 1_000 });
    expect(drift.share()).toBe(MAX_DRIFT_SHARE);
  });
});

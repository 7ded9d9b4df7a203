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
    // 20 ms earlier, of the 5 s to the due time when decided.
    expect(drift.share()).toBeCloseTo(0.004);
  });

  it('takes the p90 of the samples: a few sessions speeding up widen the margin', () => {
    const drift = new DueDrift();
    for (let i = 0; i < 18; i++) drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 5_200 });
    for (let i = 0; i < 2; i++) drift.record({ at: 0, dueAt: 5_000 }, { at: 4_000, dueAt: 3_800 });
    // Later due times count as no drift; 1.2 s earlier of the 5 s to it is 0.24.
    expect(drift.share()).toBeCloseTo(0.24);
  });

  it("measures a due time's jitter against the time to it, not the run's length", () => {
    const drift = new DueDrift();
    // A 400 ms run decided 2 s before its due time, which came 150 ms earlier meanwhile.
    for (let i = 0; i < MIN_DRIFT_SAMPLES; i++)
      drift.record({ at: 0, dueAt: 2_000 }, { at: 400, dueAt: 1_850 });
    expect(drift.share()).toBeCloseTo(0.075);
    // A run that ended past its due time: measured over the run.
    const late = new DueDrift();
    for (let i = 0; i < MIN_DRIFT_SAMPLES; i++) late.record({ at: 0, dueAt: 300 }, { at: 600, dueAt: 240 });
    expect(late.share()).toBeCloseTo(0.1);
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

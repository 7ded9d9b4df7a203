import { describe, expect, it } from 'vitest';
import { MIN_RUN_SPREAD_MS, RunTimes } from './run-times.js';

describe('RunTimes (a worker’s recent published runs)', () => {
  it('plans with the median and a spread of the slow runs over it, never under the minimum', () => {
    const times = new RunTimes();
    expect(times.median()).toBeUndefined();
    expect(times.spread()).toBeUndefined();
    for (let i = 0; i < 17; i++) times.record(400 + i);
    for (let i = 0; i < 3; i++) times.record(900);
    expect(times.median()).toBe(410);
    // The p90 of twenty runs is one of the three slow ones: 900 - 410.
    expect(times.spread()).toBe(490);
    const steady = new RunTimes();
    for (let i = 0; i < 20; i++) steady.record(400);
    expect(steady.spread()).toBe(MIN_RUN_SPREAD_MS);
  });
});

/**
 * Sliced work shares the turn of the loop it resumes in: two jobs paused in the same turn
 * resume in the same `setImmediate` phase, and the second one only gets what the first left
 * of the slice (issue 47 point 2: two 5 ms jobs held the loop 10 ms between two turns). The
 * library's clock is a counter advanced by each piece of work: no timing is measured.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from './clock.js';
import { TimeSlice } from './time-slice.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('TimeSlice', () => {
  it('two jobs resumed in the same turn share one slice', async () => {
    let now = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => now);
    // Pieces of work (1 ms of the fake clock each) run between two turns of a ticker.
    let sinceTick = 0;
    let most = 0;
    let ticking = true;
    const tick = () => {
      most = Math.max(most, sinceTick);
      sinceTick = 0;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const job = async (pieces: number) => {
      const slice = new TimeSlice({ sliceMs: 5 });
      // Both begin in the next turn (two calls that each paused once, e.g. after their read).
      await slice.pause();
      for (let k = 0; k < pieces; k++) {
        now += 1;
        sinceTick++;
        if (slice.due()) await slice.pause();
      }
      return slice.pauses;
    };
    const [a, b] = await Promise.all([job(200), job(200)]);
    ticking = false;
    most = Math.max(most, sinceTick);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    // One slice (5 pieces) and the one piece of the job that found it spent; 10 before.
    expect(most).toBeLessThanOrEqual(6);
  });

  it('a step that starts its own slice after another paused, in the same turn, shares the turn', async () => {
    let now = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => now);
    let sinceTick = 0;
    let most = 0;
    let ticking = true;
    const tick = () => {
      most = Math.max(most, sinceTick);
      sinceTick = 0;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const run = async (slice: TimeSlice, pieces: number) => {
      for (let k = 0; k < pieces; k++) {
        now += 1;
        sinceTick++;
        if (slice.due()) await slice.pause();
      }
    };
    // A count that ends 4 pieces into a turn, then a cascade with a slice of its own (as
    // runStepsYielding makes one): it gets the 1 piece left of the turn, not 5 more.
    const count = new TimeSlice({ sliceMs: 5 });
    await run(count, 9);
    const cascade = new TimeSlice({ sliceMs: 5 });
    await run(cascade, 20);
    ticking = false;
    most = Math.max(most, sinceTick);
    expect(cascade.pauses).toBeGreaterThan(0);
    // One slice (5 pieces) and the piece that found it spent; 9 before.
    expect(most).toBeLessThanOrEqual(6);
  });

  it('a job alone keeps its whole slice per turn', async () => {
    let now = 0;
    vi.spyOn(clock, 'now').mockImplementation(() => now);
    const slice = new TimeSlice({ sliceMs: 5 });
    for (let k = 0; k < 100; k++) {
      now += 1;
      if (slice.due()) await slice.pause();
    }
    expect(slice.pauses).toBe(20);
  });
});

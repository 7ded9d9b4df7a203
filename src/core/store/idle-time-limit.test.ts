/**
 * The store's time limits (idle-time-limit.ts) arm nothing within the turn they are made in: a
 * store that answers before the turn ends (in-process, a cache) costs one immediate, no timer,
 * and no reading of the loop's idle time (`performance.eventLoopUtilization`, which loads Node's
 * perf_hooks modules: issue 47 point 4). A store that does not answer is still timed out.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { idleTimeLimit, waitWithin } from './idle-time-limit.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('idleTimeLimit', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reads nothing and arms no timer for an answer within the turn', async () => {
    const reads = vi.spyOn(performance, 'eventLoopUtilization');
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const budget = { leftMs: 1000, affected: false };
    await waitWithin(Promise.resolve('answer'), budget);
    const limit = idleTimeLimit(1000);
    await Promise.resolve();
    limit.cancel();
    expect(limit.waitedMs()).toBe(0);
    await turn();
    await turn();
    expect(reads).not.toHaveBeenCalled();
    expect(timers).not.toHaveBeenCalled();
    expect(budget.leftMs).toBe(1000);
  });

  it('times out a store that does not answer, after the idle time it was given', async () => {
    const limit = idleTimeLimit(5);
    const outcome = await Promise.race([new Promise(() => {}), limit.promise]).catch((error: Error) => error);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe('no answer within 5 ms');
    expect(limit.waitedMs()).toBeGreaterThanOrEqual(4.5);
    limit.cancel();
  });
});

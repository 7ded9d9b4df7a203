/**
 * Left by review-80b: the in-process store's session locks were timed on the wall clock
 * (`Date.now`), so a clock step within the process changed their lifetime: stepped forward (NTP
 * catching up, a VM resumed) a held lock lapsed at once and a second holder took it while the
 * first was still working; stepped back, a crashed holder's lock blocked the session for as long
 * as the step. The waits for a lock measured their time limit on it too. All are now timed on the
 * monotonic `clock`. Both clocks are spied: nothing waits.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clock } from '../clock.js';
import { waitForSessionLock } from './session-lock.js';
import { MemorySessionStore, type SessionLock, type SessionStore } from './session-store.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;

/** Moves the wall clock by `wallMs` and the monotonic one by `monotonicMs` from now on. */
function step(wallMs: number, monotonicMs: number): void {
  const wall = Date.now();
  const monotonic = clock.now();
  vi.spyOn(Date, 'now').mockImplementation(() => wall + wallMs);
  vi.spyOn(clock, 'now').mockImplementation(() => monotonic + monotonicMs);
}

describe('MemorySessionStore locks on a wall clock that steps', () => {
  it('a held lock does not lapse when the wall clock jumps forward', async () => {
    const store = new MemorySessionStore();
    const first = await store.acquireLock('s', 10_000);
    expect(first).toBeDefined();
    step(HOUR, 1);
    expect(await store.acquireLock('s', 10_000)).toBeUndefined();
    expect(await first!.renew()).toBe(true);
  });

  it('a lock nobody released lapses after its time to live when the wall clock stepped back', async () => {
    const store = new MemorySessionStore();
    expect(await store.acquireLock('s', 10_000)).toBeDefined();
    step(-HOUR, 10_001);
    expect(await store.acquireLock('s', 10_000)).toBeDefined();
  });

  it('a renewal lasts its time to live on the monotonic clock', async () => {
    const store = new MemorySessionStore();
    const lock = await store.acquireLock('s', 10_000);
    step(-HOUR, 0);
    expect(await lock!.renew(10_000)).toBe(true);
    vi.restoreAllMocks();
    step(0, 10_001);
    expect(await store.acquireLock('s', 10_000)).toBeDefined();
  });
});

describe('waitForSessionLock on a wall clock that steps', () => {
  it('keeps trying after the wall clock jumps past its time limit', async () => {
    const inner = new MemorySessionStore();
    let asked = 0;
    // Refuses the first ask; the wall clock then jumps an hour on (the wait's own limit is 10 s).
    const store = {
      acquireLock: async (sessionId: string, ttlMs: number): Promise<SessionLock | undefined> => {
        asked++;
        if (asked > 1) return inner.acquireLock(sessionId, ttlMs);
        step(HOUR, 1);
        return undefined;
      },
    } as unknown as SessionStore;
    const lock = await waitForSessionLock(store, 's', { ttlMs: 5_000, timeoutMs: 10_000, retryMs: 1 });
    expect(lock).toBeDefined();
    expect(asked).toBe(2);
  });
});

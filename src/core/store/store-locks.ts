/**
 * The locks the fail-open store hands out: the store's own with renewals and release under
 * the call's time limit, or one of this process only while the store cannot give one.
 */
import type { SessionLock } from '../session/session-store.js';

/**
 * The store's lock, its renewals and release run through `call` (the call's time limit),
 * which resolves `undefined` when the store did not answer: a renewal then keeps the lock
 * (the fencing token still guards the write), a release leaves it to lapse by its time to
 * live. An answered renewal costs the call nothing (`free`): renewals run beside its work.
 */
export function boundedLock(
  lock: SessionLock,
  call: <T>(operation: () => Promise<T>, free?: (value: T) => boolean) => Promise<T | undefined>,
): SessionLock {
  return {
    sessionId: lock.sessionId,
    token: lock.token,
    renew: async (ttlMs) =>
      (await call(
        () => lock.renew(ttlMs),
        () => true,
      )) ?? true,
    release: async () => (await call(() => lock.release())) ?? false,
  };
}

/**
 * A lock of this process only (a negative token): the manager's queue serializes this
 * process's calls of the session; other processes are fenced by the compare-and-set when the
 * kept write reaches the store.
 */
export function localLock(sessionId: string, token: number): SessionLock {
  let held = true;
  return {
    sessionId,
    token,
    renew: async () => held,
    release: async () => {
      const was = held;
      held = false;
      return was;
    },
  };
}

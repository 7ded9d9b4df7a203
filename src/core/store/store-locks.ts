/**
 * The locks the fail-open store hands out: the store's own with renewals and release under
 * the call's time limit, or one of this process only while the store cannot give one.
 */
import type { SessionLock } from '../session/session-store.js';

/**
 * The store's lock, its renewals and release run through `call` (the call's time limit),
 * which resolves `undefined` when the store did not answer: a renewal then keeps the lock
 * (the fencing token still guards the write), a release goes to `unreleased` (released before
 * the session's next lock is asked for, see {@link UnreleasedLocks}). An answered renewal costs
 * the call nothing (`free`): renewals run beside its work.
 */
export function boundedLock(
  lock: SessionLock,
  call: <T>(operation: () => Promise<T>, free?: (value: T) => boolean) => Promise<T | undefined>,
  unreleased?: UnreleasedLocks,
): SessionLock {
  return {
    sessionId: lock.sessionId,
    token: lock.token,
    renew: async (ttlMs) =>
      (await call(
        () => lock.renew(ttlMs),
        () => true,
      )) ?? true,
    release: async () => {
      const released = await call(() => lock.release());
      if (released === undefined) unreleased?.keep(lock);
      return released ?? false;
    },
  };
}

/**
 * Locks whose release the store did not answer (a fault in the call that held them): the
 * store still holds them until their time to live, so the session's next call would wait on
 * its own lock that long (10 s by default). They are released (by token: a lock lapsed and
 * taken by another process is not touched) before the session's next lock is asked for.
 */
export class UnreleasedLocks {
  readonly #locks = new Map<string, SessionLock>();

  keep(lock: SessionLock): void {
    this.#locks.set(lock.sessionId, lock);
  }

  /** Releases `sessionId`'s unreleased lock through `call`; kept again if the store does not answer. */
  async releaseFirst(sessionId: string, call: (operation: () => Promise<boolean>) => Promise<unknown>) {
    const lock = this.#locks.get(sessionId);
    if (!lock) return;
    this.#locks.delete(sessionId);
    await call(() => lock.release()).catch(() => this.#locks.set(sessionId, lock));
  }
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

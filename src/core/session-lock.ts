/**
 * Helpers over {@link SessionStore.acquireLock}: wait for a session's lock, and run work
 * while holding it (renewed in the background, released at the end).
 */
import { CompactError } from './errors.js';
import type { SessionLock, SessionStore } from './session-store.js';
import { checkTtl } from './session-store-checks.js';

/** Options of {@link waitForSessionLock}. */
export interface WaitForSessionLockOptions {
  /** Time to live of the lock once taken, in milliseconds. */
  ttlMs: number;
  /**
   * Give up (resolve `undefined`) after this many milliseconds. A crashed holder's lock lapses
   * within its own time to live, so waiting twice that covers it; a live holder renews.
   * @default 2 * ttlMs
   */
  timeoutMs?: number;
  /**
   * Milliseconds between attempts (each wait gets up to 50% random jitter so waiters spread).
   * @default 25
   */
  retryMs?: number;
  /** Stops waiting: rejects with a `CompactError` of code `aborted`. */
  signal?: AbortSignal;
}

function aborted(signal: AbortSignal): CompactError {
  return new CompactError('aborted', 'waiting for the session lock was aborted', { cause: signal.reason });
}

/** Resolves after `ms`, or rejects when `signal` aborts first (its timer is cleared). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Takes a session's lock, retrying while another holder has it, until `timeoutMs`.
 *
 * @example
 * ```ts
 * const lock = await waitForSessionLock(store, sessionId, { ttlMs: 30_000 });
 * if (lock) try { ... await store.set(sessionId, next, { fencingToken: lock.token }) } finally { await lock.release() }
 * ```
 */
export async function waitForSessionLock(
  store: SessionStore,
  sessionId: string,
  options: WaitForSessionLockOptions,
): Promise<SessionLock | undefined> {
  checkTtl(options.ttlMs);
  const timeoutMs = options.timeoutMs ?? 2 * options.ttlMs;
  const retryMs = options.retryMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (options.signal?.aborted) throw aborted(options.signal);
    const lock = await store.acquireLock(sessionId, options.ttlMs);
    if (lock) return lock;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await pause(Math.min(left, retryMs * (1 + Math.random() / 2)), options.signal);
  }
}

/** Options of {@link withSessionLock}. */
export interface WithSessionLockOptions extends WaitForSessionLockOptions {
  /**
   * Milliseconds between renewals while the work runs.
   * @default ttlMs / 3
   */
  renewEveryMs?: number;
}

/** What {@link withSessionLock} resolves: the work's value, or that the lock was not had. */
export type WithSessionLockResult<T> = { acquired: true; value: T } | { acquired: false };

/**
 * Waits for the session's lock, runs `work` while renewing it, and releases it afterwards
 * (also when `work` throws). The `signal` given to `work` aborts when a renewal finds the
 * lock lost; writes should still pass `lock.token` as `fencingToken`, since a stalled
 * process may not notice in time. The renewal timer never keeps the process alive.
 *
 * @example
 * ```ts
 * const result = await withSessionLock(store, id, { ttlMs: 10_000 }, async (lock, signal) =>
 *   store.set(id, await compactWith(signal), { expectedVersion: seen, fencingToken: lock.token }));
 * ```
 */
export async function withSessionLock<T>(
  store: SessionStore,
  sessionId: string,
  options: WithSessionLockOptions,
  work: (lock: SessionLock, signal: AbortSignal) => Promise<T>,
): Promise<WithSessionLockResult<T>> {
  const lock = await waitForSessionLock(store, sessionId, options);
  if (!lock) return { acquired: false };
  const lost = new AbortController();
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      renewing = renewing.then(async () => {
        if (lost.signal.aborted) return;
        const held = await lock.renew(options.ttlMs).catch(() => false);
        if (!held) lost.abort(new CompactError('concurrent_compaction', 'the session lock was lost'));
      });
    },
    Math.max(1, options.renewEveryMs ?? Math.floor(options.ttlMs / 3)),
  );
  timer.unref();
  try {
    return { acquired: true, value: await work(lock, lost.signal) };
  } finally {
    clearInterval(timer);
    await renewing;
    // A release that fails leaves the lock to lapse by itself; the work's outcome stands.
    await lock.release().catch(() => false);
  }
}

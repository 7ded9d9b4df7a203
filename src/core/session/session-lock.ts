/**
 * Helpers over {@link SessionStore.acquireLock}: wait for a session's lock, and run work
 * while holding it (renewed in the background, released at the end).
 */
import { clock } from '../clock.js';
import { CompactError } from '../errors.js';
import type { SessionLock, SessionState, SessionStore } from './session-store.js';
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
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    if (options.signal?.aborted) throw aborted(options.signal);
    const lock = await store.acquireLock(sessionId, options.ttlMs);
    if (lock) return lock;
    const left = deadline - clock.now();
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

/** Options of {@link updateSessionOnce}. */
export interface UpdateSessionOnceOptions extends WithSessionLockOptions {
  /**
   * The state version the caller saw when it decided to update: if the session has moved
   * past it by the time the lock is held, another process already did the work.
   */
  seenVersion: number;
}

/** What {@link updateSessionOnce} did. */
export type UpdateSessionOnceResult =
  /** `update`'s state was written under the lock. */
  | { outcome: 'wrote'; state: SessionState }
  /** The session was already past `seenVersion` (or `update` returned nothing): `state` is current. */
  | { outcome: 'current'; state: SessionState | undefined }
  /** The write was refused: the lock was lost to a newer holder, or the state changed outside the lock. */
  | { outcome: 'refused'; state: SessionState | undefined }
  /** The lock stayed taken for `timeoutMs`. */
  | { outcome: 'timeout' };

/**
 * One update of a session across every process sharing `store`: waits for the session's
 * lock, re-reads the state, and runs `update` only when nobody moved the session past
 * `seenVersion` meanwhile; the result is written with a compare-and-set on the version it
 * read and the lock's fencing token. Callers that lose the race get the winner's state.
 * `update` gets the lock (its `token` fences the write) and a signal that aborts when the
 * lock is lost; returning `undefined` writes nothing.
 *
 * @example
 * ```ts
 * const result = await updateSessionOnce(store, id, { ttlMs: 30_000, seenVersion: state.version },
 *   async (current, { signal }) => compactedState(current, await summarize(history, signal)));
 * ```
 */
export async function updateSessionOnce(
  store: SessionStore,
  sessionId: string,
  options: UpdateSessionOnceOptions,
  update: (
    current: SessionState | undefined,
    held: { lock: SessionLock; signal: AbortSignal },
  ) => Promise<SessionState | undefined>,
): Promise<UpdateSessionOnceResult> {
  const result = await withSessionLock(
    store,
    sessionId,
    options,
    async (lock, signal): Promise<UpdateSessionOnceResult> => {
      const current = await store.get(sessionId);
      const version = current?.version ?? 0;
      if (version > options.seenVersion) return { outcome: 'current', state: current };
      const next = await update(current, { lock, signal });
      if (!next) return { outcome: 'current', state: current };
      const written = await store.set(sessionId, next, {
        expectedVersion: version,
        fencingToken: lock.token,
      });
      return written
        ? { outcome: 'wrote', state: next }
        : { outcome: 'refused', state: await store.get(sessionId) };
    },
  );
  return result.acquired ? result.value : { outcome: 'timeout' };
}

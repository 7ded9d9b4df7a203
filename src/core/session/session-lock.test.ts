import { describe, expect, it } from 'vitest';
import { isCompactError } from '../errors.js';
import { updateSessionOnce, waitForSessionLock, withSessionLock } from './session-lock.js';
import { MemorySessionStore, type SessionLock, type SessionState } from './session-store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('waitForSessionLock', () => {
  it('waits for the holder to release, then takes the lock with a newer token', async () => {
    const store = new MemorySessionStore();
    const held = (await store.acquireLock('s', 60_000)) as SessionLock;
    const waiting = waitForSessionLock(store, 's', { ttlMs: 60_000, retryMs: 5 });
    await sleep(50);
    await held.release();
    const lock = await waiting;
    expect(lock?.token).toBeGreaterThan(held.token);
  });

  it('gives up after timeoutMs while a live holder keeps the lock', async () => {
    const store = new MemorySessionStore();
    await store.acquireLock('s', 60_000);
    expect(await waitForSessionLock(store, 's', { ttlMs: 1000, timeoutMs: 60, retryMs: 10 })).toBeUndefined();
  });

  it('rejects with aborted when the signal fires while waiting', async () => {
    const store = new MemorySessionStore();
    await store.acquireLock('s', 60_000);
    const controller = new AbortController();
    const waiting = waitForSessionLock(store, 's', {
      ttlMs: 1000,
      retryMs: 10_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    const error = await waiting.catch((e: unknown) => e);
    expect(isCompactError(error, 'aborted')).toBe(true);
  });
});

describe('withSessionLock', () => {
  it('renews the lock while the work runs past its time to live, then releases it', async () => {
    const store = new MemorySessionStore();
    const result = await withSessionLock(
      store,
      's',
      // Renewed every 20 ms: a loaded machine would have to stall the event loop for most of
      // the second's time to live to lose it.
      { ttlMs: 1000, renewEveryMs: 20 },
      async (lock, signal) => {
        await sleep(3000);
        expect(await store.acquireLock('s', 60_000), 'still held after 3 times its ttl').toBeUndefined();
        expect(signal.aborted).toBe(false);
        return lock.token;
      },
    );
    expect(result.acquired).toBe(true);
    const next = await store.acquireLock('s', 60_000);
    expect(next?.token).toBeGreaterThan(result.acquired ? result.value : Number.POSITIVE_INFINITY);
  });

  it('releases the lock when the work throws', async () => {
    const store = new MemorySessionStore();
    await expect(
      withSessionLock(store, 's', { ttlMs: 60_000 }, async () => {
        throw new Error('summarizer down');
      }),
    ).rejects.toThrow('summarizer down');
    expect(await store.acquireLock('s', 60_000)).toBeDefined();
  });

  it('resolves acquired: false when the lock stays taken', async () => {
    const store = new MemorySessionStore();
    await store.acquireLock('s', 60_000);
    let ran = false;
    const result = await withSessionLock(store, 's', { ttlMs: 1000, timeoutMs: 30 }, async () => {
      ran = true;
    });
    expect(result).toEqual({ acquired: false });
    expect(ran).toBe(false);
  });

  it('aborts the work signal when a renewal finds the lock taken over', async () => {
    const store = new MemorySessionStore();
    let taker: SessionLock | undefined;
    const result = await withSessionLock(
      store,
      's',
      { ttlMs: 50, renewEveryMs: 400 },
      async (lock, signal) => {
        // The lock lapses before the first renewal and another process takes it.
        taker = await waitForSessionLock(store, 's', { ttlMs: 60_000, retryMs: 5 });
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        expect(isCompactError(signal.reason, 'concurrent_compaction')).toBe(true);
        return store.set(
          's',
          { sessionId: 's', version: 1, coveredIds: [], updatedAt: 0 },
          { fencingToken: lock.token },
        );
      },
    );
    expect(result).toEqual({ acquired: true, value: false });
    expect(await taker?.release(), "the stale holder's release left the new lock alone").toBe(true);
  });
});

describe('updateSessionOnce', () => {
  const next = (current: SessionState | undefined, by: number): SessionState => ({
    sessionId: 's',
    version: (current?.version ?? 0) + 1,
    coveredIds: [...(current?.coveredIds ?? []), `by-${by}`],
    updatedAt: 0,
  });

  it('runs one update for 50 concurrent callers that saw the same version; the rest get its state', async () => {
    const store = new MemorySessionStore();
    let updates = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        updateSessionOnce(store, 's', { ttlMs: 10_000, seenVersion: 0, retryMs: 1 }, async (current) => {
          updates++;
          await sleep(5);
          return next(current, i);
        }),
      ),
    );
    expect(updates).toBe(1);
    const wrote = results.filter((r) => r.outcome === 'wrote');
    expect(wrote).toHaveLength(1);
    const stored = await store.get('s');
    expect(stored?.version).toBe(1);
    for (const result of results)
      expect(result.outcome === 'timeout' ? undefined : result.state).toEqual(stored);
  });

  it('writes nothing when update returns undefined, and reports a write refused outside the lock', async () => {
    const store = new MemorySessionStore();
    expect(
      await updateSessionOnce(store, 's', { ttlMs: 10_000, seenVersion: 0 }, async () => undefined),
    ).toEqual({ outcome: 'current', state: undefined });
    const sneaked = next(undefined, 99);
    const result = await updateSessionOnce(store, 's', { ttlMs: 10_000, seenVersion: 0 }, async (current) => {
      // A writer that ignores the lock lands first; the compare-and-set catches it.
      await store.set('s', sneaked);
      return next(current, 1);
    });
    expect(result).toEqual({ outcome: 'refused', state: sneaked });
  });

  it('times out while a live holder keeps the lock', async () => {
    const store = new MemorySessionStore();
    await store.acquireLock('s', 60_000);
    const result = await updateSessionOnce(
      store,
      's',
      { ttlMs: 1000, timeoutMs: 30, seenVersion: 0 },
      async (current) => next(current, 1),
    );
    expect(result).toEqual({ outcome: 'timeout' });
  });
});

/**
 * A store fault in the call that holds the session lock (the state's write failed: Redis
 * killed or timing out mid-compaction) left the lock's release unanswered, and the fail-open
 * store dropped it: the store kept the lock for its whole time to live (10 s by default), so
 * the session's next call, once the store answered again, waited on its own lock that long.
 * Now the release is tried again before the session's next lock is asked for.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { HostileStore, JsonTextStore } from '../support/hostile-store.js';
import { charCounter, chatTurns } from '../support/manager-fixtures.js';

afterEach(() => {
  vi.restoreAllMocks();
});

it("the session's next call after a fault does not wait on its own unreleased lock", async () => {
  const inner = new JsonTextStore();
  const store = new HostileStore(inner);
  const manager = new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    store,
  });
  const history = chatTurns(20, 30);
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  store.faults.writes = 1;
  expect((await manager.manualCompact('chat', history.slice(0, 16))).summary?.local).toBe(true);
  // The next call comes after the store's cool-down (the monotonic clock moved on a minute).
  const realNow = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => realNow() + 60_000);
  const acquire = inner.acquireLock.bind(inner);
  let refused = 0;
  inner.acquireLock = async (sessionId, ttlMs) => {
    const lock = await acquire(sessionId, ttlMs);
    if (lock === undefined) refused++;
    return lock;
  };
  const next = await manager.manualCompact('chat', history.slice(0, 24));
  await manager.shutdown();
  expect(next.summary?.local).not.toBe(true);
  expect(next.version).toBe(2);
  expect(refused).toBe(0);
});

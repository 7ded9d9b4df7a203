/**
 * Issue 38 points 5 and 6 with a store stand-in: a call's waits on the store share one budget
 * (a lock taken before the store stalled cannot hold the call through its release or
 * renewals), and an outage is reported once when it starts and once when it ends, with the
 * number of calls it affected. Counted, not timed.
 */
import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns } from '../../../test/support/manager-fixtures.js';
import type { AnyCompactEvent } from '../events/events.js';
import {
  MemorySessionStore,
  type SessionLock,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
} from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';

/** A shared store over a memory store that can throw or stall (every operation, lock operations included). */
class StallingStore implements SessionStore {
  readonly name = 'stalling';
  readonly inner = new MemorySessionStore();
  mode: 'up' | 'throw' | 'stall' = 'up';
  /** Operations started while stalled (none of them ever settles). */
  stalled = 0;
  #run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.mode === 'throw') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    if (this.mode === 'stall') {
      this.stalled++;
      return new Promise<T>(() => {});
    }
    return operation();
  }
  get(id: string): Promise<SessionState | undefined> {
    return this.#run(() => this.inner.get(id));
  }
  set(id: string, state: SessionState, options?: SessionStoreSetOptions): Promise<boolean> {
    return this.#run(() => this.inner.set(id, state, options));
  }
  delete(id: string): Promise<void> {
    return this.#run(() => this.inner.delete(id));
  }
  async acquireLock(id: string, ttlMs: number): Promise<SessionLock | undefined> {
    const lock = await this.#run(() => this.inner.acquireLock(id, ttlMs));
    if (!lock) return undefined;
    return {
      sessionId: lock.sessionId,
      token: lock.token,
      renew: (ttl) => this.#run(() => lock.renew(ttl)),
      release: () => this.#run(() => lock.release()),
    };
  }
}

function managerOver(store: SessionStore, extra: Record<string, unknown> = {}) {
  const manager = new CompactManager({
    maxContextTokens: 10_000,
    tokenCounter: charCounter,
    store,
    storeTimeoutMs: 50,
    policy: { keepRecentTurns: 2, hardCapBuffer: 500 },
    ...extra,
  });
  const events: AnyCompactEvent[] = [];
  manager.on('compact.error', (event) => events.push(event as AnyCompactEvent));
  manager.on('compact.warning', (event) => events.push(event as AnyCompactEvent));
  return { manager, events };
}

describe("one budget for a call's waits on the store", () => {
  it('a store that stalls while the call holds its lock: the call settles and starts one stalled operation', async () => {
    const store = new StallingStore();
    // The store stalls while the summarizer runs: the compaction holds the store's lock then.
    const { manager, events } = managerOver(store, {
      summarizer: {
        name: 'stalls-the-store',
        summarize: async () => {
          store.mode = 'stall';
          return { text: 'Goal: answer the questions.' };
        },
      },
    });
    const result = await manager.compact('s', chatTurns(45));
    expect(result.applied).toBe(true);
    expect(result.tokensAfter).toBeLessThanOrEqual(manager.budget);
    // After the first stalled operation the budget is spent: the write and the lock's release
    // are not even started (they would never settle).
    expect(store.stalled).toBe(1);
    expect(events.filter((e) => e.name === 'compact.error')).toHaveLength(1);
    await manager.shutdown();
  });
});

describe('an outage is reported when it starts and when it ends', () => {
  it('one storage_failed, then one storage_recovered naming the calls it affected', async () => {
    const store = new StallingStore();
    const { manager, events } = managerOver(store);
    await manager.compact('s', chatTurns(10));
    store.mode = 'throw';
    for (let turns = 11; turns <= 20; turns++) await manager.compact('s', chatTurns(turns));
    expect(events.map((e) => e.name)).toEqual(['compact.error']);
    store.mode = 'up';
    // The store is left alone for a second after a fault; calls then find it back.
    const recovered = new Promise<AnyCompactEvent>((resolve) =>
      manager.on('compact.warning', (event) => resolve(event as AnyCompactEvent)),
    );
    let turns = 21;
    let found: AnyCompactEvent | undefined;
    void recovered.then((event) => {
      found = event;
    });
    while (!found) {
      await manager.compact('s', chatTurns(turns++));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(found.properties).toMatchObject({
      code: 'storage_recovered',
      context: { target: 'store', affectedCalls: turns - 1 - 11 },
    });
    // One more call, one more outage-free turn: nothing more is reported.
    await manager.compact('s', chatTurns(turns));
    expect(events.map((e) => e.name)).toEqual(['compact.error', 'compact.warning']);
    await manager.shutdown();
  });
});

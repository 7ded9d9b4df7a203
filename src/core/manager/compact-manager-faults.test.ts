/**
 * Store faults never fail a call: a store that throws or hangs is left for the in-process
 * copy of the session's state, one `compact.error` per outage. A compaction during the outage
 * is a local answer: its summary claims no version (no process can claim one the store has
 * not granted), and the session goes on from the store's state once it answers (issue 46).
 * `failOnStorageError` restores throwing.
 */
import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns } from '../../../test/support/manager-fixtures.js';
import { isCompactError } from '../errors.js';
import type { AnyCompactEvent } from '../events/events.js';
import {
  MemorySessionStore,
  type SessionLock,
  type SessionState,
  type SessionStore,
  type SessionStoreSetOptions,
} from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';

type Mode = 'up' | 'throw' | 'hang';

/** A shared store (not the in-process class) over a real memory store, that can throw or hang. */
class FaultyStore implements SessionStore {
  readonly name = 'faulty';
  readonly inner = new MemorySessionStore();
  mode: Mode = 'up';
  calls = 0;
  async #run<T>(operation: () => Promise<T>): Promise<T> {
    this.calls++;
    if (this.mode === 'throw') {
      const error = new Error('connect ECONNREFUSED 127.0.0.1:6379');
      (error as { code?: string }).code = 'ECONNREFUSED';
      throw error;
    }
    if (this.mode === 'hang') return new Promise<T>(() => {});
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
  acquireLock(id: string, ttlMs: number): Promise<SessionLock | undefined> {
    return this.#run(() => this.inner.acquireLock(id, ttlMs));
  }
}

const WINDOW = 10_000;

function managerOver(store: SessionStore, extra: Record<string, unknown> = {}) {
  const manager = new CompactManager({
    maxContextTokens: WINDOW,
    tokenCounter: charCounter,
    store,
    storeTimeoutMs: 50,
    policy: { keepRecentTurns: 2, hardCapBuffer: 500 },
    ...extra,
  });
  const errors: AnyCompactEvent[] = [];
  manager.on('compact.error', (event) => {
    if (event.properties.errorType === 'storage_failed') errors.push(event as AnyCompactEvent);
  });
  return { manager, errors };
}

/** Runs turns `from..to` (one preflight each) and checks every request fits the budget. */
async function run(manager: CompactManager, from: number, to: number) {
  const results = [];
  for (let turns = from; turns <= to; turns++) {
    const result = await manager.compact('s', chatTurns(turns));
    expect(result.tokensAfter, `turn ${turns}`).toBeLessThanOrEqual(manager.budget);
    results.push(result);
  }
  return results;
}

describe('fail open on store faults', () => {
  for (const mode of ['throw', 'hang'] as const) {
    it(`a store that ${mode}s fails no call, keeps every request in the window, and reports the outage once`, async () => {
      const store = new FaultyStore();
      const { manager, errors } = managerOver(store);
      const before = await run(manager, 10, 45);
      const versionBefore = before.at(-1)!.version;
      expect(versionBefore).toBeGreaterThan(0);
      expect((await store.inner.get('s'))?.version).toBe(versionBefore);

      store.mode = mode;
      const callsBefore = store.calls;
      const during = await run(manager, 46, 90);
      // The store is left alone after the fault: 45 calls do not each try it (and wait for the
      // time limit); only an occasional probe does. Counted, not timed: a loaded machine is slow.
      expect(store.calls - callsBefore).toBeLessThan(45);
      expect(during.some((r) => r.applied)).toBe(true);
      // Local answers: no version claimed, their summary sent unversioned and unmarked.
      const versionDuring = during.at(-1)!.version;
      expect(versionDuring).toBe(versionBefore);
      const compacted = during.filter((r) => r.applied);
      expect(compacted.every((r) => r.summary?.local === true && r.version === versionBefore)).toBe(true);
      const sentDuring = JSON.stringify(during.map((r) => r.messages));
      expect(sentDuring).toContain('<COMPACT-LOCAL-SUMMARY>');
      expect(sentDuring).not.toContain(`<COMPACT-SUMMARY v${versionBefore + 1}>`);
      // The view goes on from the in-process state: the summary is still sent.
      expect(JSON.stringify(during[0]!.messages)).toContain(`<COMPACT-SUMMARY v${versionBefore}>`);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.properties).toMatchObject({ errorType: 'storage_failed' });
      const message = String((errors[0]!.properties as { message: string }).message);
      expect(message).toContain(mode === 'throw' ? 'ECONNREFUSED' : 'no answer within 50 ms');
      expect((await store.inner.get('s'))?.version).toBe(versionBefore);

      store.mode = 'up';
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const after = await run(manager, 91, 92);
      // The session goes on from the store's state: the next version is claimed there.
      expect((await store.inner.get('s'))?.version).toBe(versionBefore + 1);
      expect(JSON.stringify(after.map((r) => r.messages))).not.toContain('<COMPACT-LOCAL-SUMMARY>');
      expect(after.at(-1)!.version).toBe((await store.inner.get('s'))?.version);
      expect(errors).toHaveLength(1);

      // A second outage is a second event.
      store.mode = 'throw';
      await run(manager, 93, 94);
      expect(errors).toHaveLength(2);
    });
  }

  it('with no in-process copy, a call during an outage goes on from the history alone', async () => {
    const store = new FaultyStore();
    const { manager, errors } = managerOver(store);
    store.mode = 'throw';
    const results = await run(manager, 40, 50);
    expect(results.some((r) => r.applied)).toBe(true);
    expect(results.every((r) => r.version === 0 && (!r.summary || r.summary.local === true))).toBe(true);
    expect(errors).toHaveLength(1);
    store.mode = 'up';
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const [after] = await run(manager, 51, 51);
    expect((await store.inner.get('s'))?.version).toBe(1);
    expect(after!.version).toBe(1);
  });

  it('a write kept during an outage loses to a newer state another process stored meanwhile', async () => {
    const store = new FaultyStore();
    const { manager } = managerOver(store);
    await run(manager, 40, 41);
    store.mode = 'throw';
    const during = await run(manager, 42, 60);
    const other: SessionState = {
      sessionId: 's',
      version: during.at(-1)!.version + 5,
      coveredIds: [],
      updatedAt: Date.now(),
    };
    await store.inner.set('s', other);
    store.mode = 'up';
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // The kept write is a compare-and-set on the version the store last had: the newer state stays.
    expect((await manager.state('s'))?.version).toBe(other.version);
    expect((await store.inner.get('s'))?.version).toBe(other.version);
    const next = await manager.compact('s', chatTurns(61));
    expect(next.tokensAfter).toBeLessThanOrEqual(manager.budget);
  });

  it('failOnStorageError: true throws storage_failed as before', async () => {
    const store = new FaultyStore();
    const { manager } = managerOver(store, { failOnStorageError: true });
    store.mode = 'throw';
    const error = await manager.compact('s', chatTurns(3)).catch((e: unknown) => e);
    expect(isCompactError(error) ? error.code : error).toBe('storage_failed');
  });

  it('rejects a bad storeTimeoutMs naming the field', () => {
    expect(() => new CompactManager({ storeTimeoutMs: Number.NaN })).toThrow(/storeTimeoutMs/);
    expect(() => new CompactManager({ failOnStorageError: 'yes' as unknown as boolean })).toThrow(
      /failOnStorageError/,
    );
  });
});

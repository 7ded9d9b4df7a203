import { describe, expect, it } from 'vitest';
import type { SessionLock, SessionState, SessionStore } from '../core/session/session-store.js';

/** A store under test, and a way to dispose of it. */
export interface SessionStoreHarness {
  store: SessionStore;
  /**
   * A second store on the same backend, as another process would open it (same server, same
   * key prefix). Required with {@link SessionStoreConformanceOptions.shared}.
   */
  open?(): Promise<SessionStore>;
  close(): Promise<void>;
}

/** Options of {@link describeSessionStoreConformance}. */
export interface SessionStoreConformanceOptions {
  /** Shown in the test names. */
  name: string;
  /** A fresh, empty store (a new key prefix, table or database per call). */
  create(): Promise<SessionStoreHarness>;
  /**
   * The backend is shared between processes: adds the tests that open a second store
   * instance with {@link SessionStoreHarness.open}. Leave off for in-process stores.
   * @default false
   */
  shared?: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `attempt` until it yields a value, up to `timeoutMs`. */
async function eventually<T>(attempt: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await sleep(20);
  }
}

function stateOf(sessionId: string, version: number, extra: Partial<SessionState> = {}): SessionState {
  return {
    sessionId,
    version,
    coveredIds: [`m-${version}`],
    updatedAt: 1_760_000_000_000 + version,
    ...extra,
  };
}

/** A state with every field set, unicode, and 50,000 covered ids. */
function fullState(sessionId: string): SessionState {
  return {
    sessionId,
    version: 7,
    summary: {
      text: 'Goal: fix the parser ✓ — ünïcode, "quotes", \\ backslashes\nand newlines 🚀',
      tokens: 321,
      summarizer: 'openai:gpt-4o-mini',
      createdAt: 1_760_000_000_123,
    },
    coveredIds: Array.from({ length: 50_000 }, (_, i) => `msg-${i}`),
    pinnedIds: ['sys-0', 'user-goal'],
    keptIds: ['msg-50000', 'msg-50001'],
    rewrites: {
      'msg-50000': { kind: 'cleared', ref: 'tool-call_0-3' },
      'msg-50001': { kind: 'shortened', ref: 'args-call_0-4', keepChars: 256 },
    },
    updatedAt: 1_760_000_000_456,
  };
}

/**
 * Registers the {@link SessionStore} contract tests for one backend: round trips, copies,
 * compare-and-set under concurrency, unusual session ids, locks with expiry and renewal,
 * fencing tokens, and (with `shared`) sharing between two store instances. The lock tests wait
 * for locks with a time to live of 150 ms to lapse.
 *
 * @example
 * ```ts
 * describeSessionStoreConformance({
 *   name: 'postgres',
 *   async create() { const store = await postgresStore(freshSchema()); return { store, close: () => store.close() } },
 * });
 * ```
 */
export function describeSessionStoreConformance(options: SessionStoreConformanceOptions): void {
  describe(`session store conformance: ${options.name}`, () => {
    const withStore =
      (run: (store: SessionStore, harness: SessionStoreHarness) => Promise<void>) => async () => {
        const harness = await options.create();
        try {
          await run(harness.store, harness);
        } finally {
          await harness.close();
        }
      };

    describeState(withStore);
    describeStateEdges(withStore);
    describeLocks(withStore);
    if (options.shared) describeSharing(withStore);
  });
}

type WithStore = (
  run: (store: SessionStore, harness: SessionStoreHarness) => Promise<void>,
) => () => Promise<void>;

function describeState(withStore: WithStore): void {
  it(
    'has a name',
    withStore(async (store) => expect(store.name).toMatch(/^[a-z0-9-]+$/)),
  );

  it(
    'round-trips a full state and knows nothing of other sessions',
    withStore(async (store) => {
      expect(await store.get('unknown')).toBeUndefined();
      expect(await store.set('s', fullState('s'))).toBe(true);
      expect(await store.get('s')).toEqual(fullState('s'));
      expect(await store.get('s2')).toBeUndefined();
    }),
  );

  it(
    'never lets a caller change stored state through an object it passed or got',
    withStore(async (store) => {
      const state = fullState('s');
      await store.set('s', state);
      state.coveredIds.push('late');
      state.version = 99;
      (state.rewrites as Record<string, unknown>)['msg-50000'] = undefined;
      const got = (await store.get('s')) as SessionState;
      try {
        got.coveredIds.length = 0;
        got.version = 98;
      } catch {
        // frozen: as good as a copy
      }
      expect(await store.get('s')).toEqual(fullState('s'));
    }),
  );

  it(
    'writes with expectedVersion only over that version (0: no state yet)',
    withStore(async (store) => {
      expect(await store.set('s', stateOf('s', 1), { expectedVersion: 1 })).toBe(false);
      expect(await store.get('s')).toBeUndefined();
      expect(await store.set('s', stateOf('s', 1), { expectedVersion: 0 })).toBe(true);
      expect(await store.set('s', stateOf('s', 5), { expectedVersion: 0 })).toBe(false);
      expect(await store.set('s', stateOf('s', 5), { expectedVersion: 2 })).toBe(false);
      expect(await store.get('s')).toEqual(stateOf('s', 1));
      // Same version again (a write that records pins without compacting), then the next one.
      expect(await store.set('s', stateOf('s', 1, { pinnedIds: ['p'] }), { expectedVersion: 1 })).toBe(true);
      expect(await store.set('s', stateOf('s', 2), { expectedVersion: 1 })).toBe(true);
      expect(await store.set('s', stateOf('s', 3))).toBe(true);
      expect((await store.get('s'))?.version).toBe(3);
    }),
  );

  it(
    'lets exactly one of 25 concurrent compare-and-sets win',
    withStore(async (store) => {
      await store.set('s', stateOf('s', 4));
      const writes = Array.from({ length: 25 }, (_, i) =>
        store.set('s', stateOf('s', 5, { coveredIds: [`writer-${i}`] }), { expectedVersion: 4 }),
      );
      const results = await Promise.all(writes);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await store.get('s')).toEqual(stateOf('s', 5, { coveredIds: [`writer-${winner}`] }));
    }),
  );
}

/** Deletion, unusual ids, sizes: the edges of a store's state. */
function describeStateEdges(withStore: WithStore): void {
  it(
    'deletes one session, and deleting an unknown one is a no-op',
    withStore(async (store) => {
      await store.set('a', stateOf('a', 3));
      await store.set('b', stateOf('b', 4));
      await store.delete('a');
      await store.delete('never-seen');
      expect(await store.get('a')).toBeUndefined();
      expect(await store.get('b')).toEqual(stateOf('b', 4));
      expect(await store.set('a', stateOf('a', 1), { expectedVersion: 0 })).toBe(true);
    }),
  );

  it(
    'keeps unusual session ids apart',
    withStore(async (store) => {
      const ids = [
        '',
        ' ',
        'a',
        'A',
        'a:lock',
        'a:b',
        '{tag}',
        '{a}',
        '../x',
        'ü 🚀',
        'line\nbreak',
        'x'.repeat(2000),
      ];
      for (const [i, id] of ids.entries()) expect(await store.set(id, stateOf(id, i + 1))).toBe(true);
      for (const [i, id] of ids.entries()) expect(await store.get(id)).toEqual(stateOf(id, i + 1));
      const locks = await Promise.all(ids.map((id) => store.acquireLock(id, 60_000)));
      expect(locks.every((lock) => lock !== undefined)).toBe(true);
      await Promise.all(locks.map((lock) => lock?.release()));
    }),
  );

  it(
    'rejects malformed input and writes nothing',
    withStore(async (store) => {
      const bad = [
        () => store.set('s', { ...stateOf('s', 1), version: -1 }),
        () => store.set('s', { ...stateOf('s', 1), version: 1.5 }),
        () => store.set('s', { sessionId: 's', version: 1, updatedAt: 0 } as unknown as SessionState),
        () => store.set('s', stateOf('s', 1), { expectedVersion: -1 }),
        () => store.set('s', stateOf('s', 1), { fencingToken: 0 }),
        () => store.set(42 as unknown as string, stateOf('s', 1)),
        () => store.acquireLock('s', 0),
        () => store.acquireLock('s', Number.NaN),
      ];
      for (const attempt of bad) await expect(attempt()).rejects.toThrow();
      expect(await store.get('s')).toBeUndefined();
    }),
  );
}

/** The lock: one holder at a time, lapsed and renewed locks, writes fenced by a newer lock. */
function describeLocks(withStore: WithStore): void {
  describeLockHolders(withStore);
  describeLockLapses(withStore);
  describeLockFencing(withStore);
}

/** One holder at a time, with a fencing token that only goes up. */
function describeLockHolders(withStore: WithStore): void {
  it(
    'gives one holder at a time, with a fencing token that only goes up',
    withStore(async (store) => {
      const first = (await store.acquireLock('s', 60_000)) as SessionLock;
      expect(Number.isSafeInteger(first.token) && first.token >= 1).toBe(true);
      expect(first.sessionId).toBe('s');
      expect(await store.acquireLock('s', 60_000)).toBeUndefined();
      expect(await store.acquireLock('other', 60_000)).toBeDefined();
      expect(await first.release()).toBe(true);
      expect(await first.release()).toBe(false);
      expect(await first.renew()).toBe(false);
      const second = (await store.acquireLock('s', 60_000)) as SessionLock;
      expect(second.token).toBeGreaterThan(first.token);
      await second.release();
      await store.set('s', stateOf('s', 1));
      await store.delete('s');
      const third = (await store.acquireLock('s', 60_000)) as SessionLock;
      expect(third.token, 'tokens never repeat, also across delete').toBeGreaterThan(second.token);
    }),
  );

  it(
    'lets exactly one of 25 concurrent acquirers hold the lock',
    withStore(async (store) => {
      const locks = await Promise.all(Array.from({ length: 25 }, () => store.acquireLock('s', 60_000)));
      expect(locks.filter((lock) => lock !== undefined)).toHaveLength(1);
    }),
  );
}

/** A lapsed lock goes to the next holder; a renewed one stays; a lapsed one nobody took revives. */
function describeLockLapses(withStore: WithStore): void {
  it(
    'lets a lapsed lock go to the next holder; the old one can neither renew nor release it',
    withStore(async (store) => {
      const old = (await store.acquireLock('s', 150)) as SessionLock;
      expect(await store.acquireLock('s', 60_000)).toBeUndefined();
      const next = await eventually(() => store.acquireLock('s', 60_000));
      expect(next.token).toBeGreaterThan(old.token);
      expect(await old.renew(60_000)).toBe(false);
      expect(await old.release()).toBe(false);
      expect(await store.acquireLock('s', 60_000), 'the stale release freed nothing').toBeUndefined();
      expect(await next.renew()).toBe(true);
      expect(await next.release()).toBe(true);
    }),
  );

  it(
    'keeps a renewed lock past its first time to live, and revives a lapsed one nobody took',
    withStore(async (store) => {
      const lock = (await store.acquireLock('s', 150)) as SessionLock;
      expect(await lock.renew(60_000)).toBe(true);
      await sleep(400);
      expect(await store.acquireLock('s', 60_000)).toBeUndefined();
      expect(await lock.renew(150)).toBe(true);
      await sleep(400);
      expect(await lock.renew(60_000), 'lapsed but not taken: revived').toBe(true);
      expect(await store.acquireLock('s', 60_000)).toBeUndefined();
    }),
  );
}

/** A write fenced by an older lock's token is refused. */
function describeLockFencing(withStore: WithStore): void {
  it(
    'refuses a write fenced by a newer lock, even when its expected version still matches',
    withStore(async (store) => {
      const stale = (await store.acquireLock('s', 150)) as SessionLock;
      expect(await store.set('s', stateOf('s', 1), { expectedVersion: 0, fencingToken: stale.token })).toBe(
        true,
      );
      const fresh = await eventually(() => store.acquireLock('s', 60_000));
      // The stale holder wakes up and writes over the version it read: refused.
      expect(await store.set('s', stateOf('s', 2), { expectedVersion: 1, fencingToken: stale.token })).toBe(
        false,
      );
      expect(await store.set('s', stateOf('s', 2), { fencingToken: stale.token })).toBe(false);
      expect(await store.get('s')).toEqual(stateOf('s', 1));
      const written = stateOf('s', 2, { coveredIds: ['fresh'] });
      expect(await store.set('s', written, { expectedVersion: 1, fencingToken: fresh.token })).toBe(true);
      await fresh.release();
      // Released, not superseded: the fresh holder's token is still the newest.
      expect(await store.set('s', stateOf('s', 3), { expectedVersion: 2, fencingToken: stale.token })).toBe(
        false,
      );
      expect(await store.get('s')).toEqual(written);
    }),
  );
}

function describeSharing(withStore: WithStore): void {
  it(
    'shares state, locks and tokens between two store instances on one backend',
    withStore(async (store, harness) => {
      if (!harness.open) throw new Error('a shared store harness needs open()');
      const other = await harness.open();
      await store.set('s', fullState('s'));
      expect(await other.get('s')).toEqual(fullState('s'));
      const lock = (await store.acquireLock('s', 60_000)) as SessionLock;
      expect(await other.acquireLock('s', 60_000)).toBeUndefined();
      expect(await other.set('s', stateOf('s', 8), { expectedVersion: 7, fencingToken: lock.token })).toBe(
        true,
      );
      await lock.release();
      const next = (await other.acquireLock('s', 60_000)) as SessionLock;
      expect(next.token).toBeGreaterThan(lock.token);
      expect(await store.set('s', stateOf('s', 9), { expectedVersion: 8, fencingToken: lock.token })).toBe(
        false,
      );
      expect(await store.get('s')).toEqual(stateOf('s', 8));
    }),
  );
}

/**
 * What the quick-resume tests share: a result reduced to what it sends and says, a fresh
 * manager's first two calls, the check that a fresh manager answered like a warm one, and the
 * same case run through a real Redis store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickKey } from '../../src/core/store/stored-counts.js';
import {
  type CompactionResult,
  CompactManager,
  type CompactManagerOptions,
  type SessionStore,
} from '../../src/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from './redis-server.js';

/** What a result sends and says, for comparison. */
export function sent(result: CompactionResult<unknown>) {
  return {
    messages: JSON.stringify(result.messages),
    tokensBefore: result.tokensBefore,
    version: result.version,
    applied: result.applied,
    reason: result.reason,
    budget: result.budget,
    kept: result.kept,
    summary: result.summary,
  };
}

export const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * A fresh manager's first call and, once the work it left is done, its next call; with
 * whether the first call indexed the session (the full path) before answering.
 */
export async function freshCalls(
  options: Omit<CompactManagerOptions, 'store'>,
  store: SessionStore,
  first: unknown[],
  second: unknown[],
) {
  const manager = new CompactManager({ ...options, store });
  const a = await manager.compact('s', copy(first));
  // Read before any turn of the loop: the quick path leaves the indexing for after the call.
  const indexed = manager.cacheStatus().sessions > 0;
  await manager.flush();
  const b = await manager.compact('s', copy(second));
  await manager.shutdown();
  return { first: sent(a), second: sent(b), indexed };
}

/** A case's two answers: a fresh manager's and a warm one's. */
export interface QuickCase {
  fresh: Awaited<ReturnType<typeof freshCalls>>;
  warm: ReturnType<typeof sent>[];
}

/** The fresh manager answered without indexing, and sent what the warm one sent, call for call. */
export function expectQuickLikeWarm({ fresh, warm }: QuickCase): void {
  expect(fresh.indexed).toBe(false);
  expect(fresh.first).toEqual(warm[0]);
  expect(fresh.second).toEqual(warm[1]);
}

/**
 * `store` with a count of the reads it answered "unchanged" (`getIfChanged`: the manager
 * skipped reading and checking a state it held at that revision). Everything else is the store's.
 */
export function countingUnchanged(store: SessionStore): SessionStore & { unchanged: number } {
  const counted = Object.assign(Object.create(store) as SessionStore, { unchanged: 0 });
  counted.getIfChanged = async (sessionId: string, revision?: string) => {
    const answer = await store.getIfChanged!(sessionId, revision);
    if (answer.unchanged) counted.unchanged++;
    return answer;
  };
  return counted;
}

/**
 * `runCase` through a Redis session store on a real redis-server (skipped with a notice without
 * one). With `skipsReads`, the fresh manager's later reads of the session's state must skip the
 * full read (the store's revision unchanged).
 */
export function describeQuickCaseInRedis(
  title: string,
  runCase: (store: SessionStore) => Promise<QuickCase>,
  { skipsReads = false } = {},
) {
  const withRedis = redisAvailable(title);
  describe.runIf(withRedis)(`${title}: a session kept in Redis`, () => {
    let server: RedisTestServer;
    beforeAll(async () => {
      server = await startRedisServer();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('answers its first call without indexing and sends what a warm manager sends', async () => {
      const store = redisSessionStore({ url: server.url });
      try {
        for (const key of ['s', 's::counts', quickKey('s')]) await store.delete(key);
        const counted = countingUnchanged(store);
        expectQuickLikeWarm(await runCase(counted));
        if (skipsReads) expect(counted.unchanged).toBeGreaterThan(0);
      } finally {
        await store.close();
      }
    });
  });
}

/**
 * A real redis-server killed and restarted (empty, no persistence) while a manager serves a
 * session: no call fails, no request goes over the window, one `compact.error` per outage,
 * and the state kept during the outage reaches the restarted server.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RedisSessionStore, redisSessionStore } from '../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../support/manager-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

/**
 * `inner` with each of its calls' promises in `waiting` until it settles: a call the store
 * cannot answer must fail at once, not wait in the client's queue for a server that is gone.
 */
function watchCalls<T extends object>(inner: T, waiting: Set<Promise<unknown>>): T {
  return new Proxy(inner, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        if (result instanceof Promise) {
          waiting.add(result);
          const settled = () => waiting.delete(result);
          result.then(settled, settled);
        }
        return result;
      };
    },
  });
}

// Without redis-server: skipped with one notice line (CI sets COMPACT_REQUIRE_REDIS=1).
const withRedis = redisAvailable('Redis outage tests');
let server: RedisTestServer;
let store: RedisSessionStore;

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  store = redisSessionStore({ url: server.url, keyPrefix: 'outage:' });
  // Connected before the run: the first call's import and connection are not the outage tested.
  await store.get('warm-up');
});

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

describe.runIf(withRedis)('redis-server killed and restarted mid-run', () => {
  it('fails no call, keeps every request in the window, reports the outage once, claims no version meanwhile, and writes the copy back', async () => {
    const waiting = new Set<Promise<unknown>>();
    const manager = new CompactManager({
      maxContextTokens: 10_000,
      tokenCounter: charCounter,
      store: watchCalls(store, waiting),
      // Generous for a loaded test machine: a stopped server is detected at once (not connected).
      storeTimeoutMs: 5_000,
      policy: { keepRecentTurns: 2, hardCapBuffer: 500 },
    });
    const errors: AnyCompactEvent[] = [];
    manager.on('compact.error', (event) => {
      if (event.properties.errorType === 'storage_failed') errors.push(event as AnyCompactEvent);
    });
    let turns = 10;
    const step = async () => {
      const result = await manager.compact('s', chatTurns(turns++));
      expect(result.tokensAfter, `turn ${turns - 1}`).toBeLessThanOrEqual(manager.budget);
      return result;
    };
    while (turns < 48) await step();
    const before = (await manager.state('s'))?.version ?? 0;
    expect(before).toBeGreaterThan(0);
    // A slow answer on a loaded machine is an outage too: only the stop is counted here.
    const earlier = errors.length;

    const port = server.port;
    await server.stop();
    let during = before;
    let local = 0;
    while (turns < 90) {
      const result = await step();
      during = result.version;
      if (result.summary?.local) local++;
    }
    // Compactions meanwhile are local answers: no version is claimed without the store (issue 46).
    expect(local).toBeGreaterThan(0);
    expect(during).toBe(before);
    const messages = errors.slice(earlier).map((e) => (e.properties as { message: string }).message);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/ECONNREFUSED|not connected|no answer within/);
    // Calls went on without waiting for the client's own 5 s timeouts (42 calls would take
    // 210 s): every store call made while the server was gone was refused, none is left
    // waiting in the client's queue (no clock: a loaded machine is only slower). The
    // immediate lets the refusals already settled run their callbacks.
    await new Promise((resolve) => setImmediate(resolve));
    expect(waiting.size, 'store calls still waiting for the stopped server').toBe(0);

    server = await startRedisServer({ port });
    // The client reconnects with a backoff of at most 2 s; calls go on meanwhile. The loop ends
    // as soon as the state is stored, however long a loaded machine takes (the test's timeout
    // bounds a hang).
    let stored = await store.get('s').catch(() => undefined);
    while ((stored?.version ?? 0) <= during) {
      await step();
      await new Promise((resolve) => setTimeout(resolve, 200));
      stored = await store.get('s').catch(() => undefined);
    }
    // The copy was written back (versions never go down) and the next version claimed in the store.
    expect(stored?.version ?? 0).toBeGreaterThan(during);
    // One event for the outage, and one saying the restarted store had lost the state.
    const after = errors.slice(earlier).map((e) => (e.properties as { message: string }).message);
    expect(after.filter((message) => !message.includes('lost the state'))).toHaveLength(1);
    expect(after.filter((message) => message.includes('lost the state'))).toHaveLength(1);
    await manager.shutdown();
  });
});

describe.runIf(withRedis)('a corrupted state in redis', () => {
  let own: RedisTestServer;
  let ownStore: RedisSessionStore;
  beforeAll(async () => {
    own = await startRedisServer();
    ownStore = redisSessionStore({ url: own.url, keyPrefix: 'outage:' });
    await ownStore.get('warm-up');
  });
  afterAll(async () => {
    await ownStore?.close();
    await own?.stop();
  });
  for (const [label, value] of [
    ['truncated JSON', '{"sessionId":"c","version":3,"coveredIds":["m'],
    ['valid JSON of the wrong shape', '{"version":"3","coveredIds":{}}'],
  ] as const) {
    it(`${label}: set aside under "corrupt", one compact.error, the session goes on as new`, async () => {
      const admin = createClient({ url: own.url });
      await admin.connect();
      try {
        const manager = new CompactManager({
          maxContextTokens: 10_000,
          tokenCounter: charCounter,
          store: ownStore,
          storeTimeoutMs: 5_000,
        });
        const errors: string[] = [];
        manager.on('compact.error', (event) => {
          if (event.properties.errorType === 'corrupt_state') errors.push(String(event.properties.message));
        });
        const id = `corrupt-${label.length}`;
        await manager.compact(id, chatTurns(45));
        await admin.hSet(`outage:${id}`, { state: value, version: '3' });
        for (let turns = 46; turns < 49; turns++) {
          const result = await manager.compact(id, chatTurns(turns));
          expect(result.tokensAfter).toBeLessThanOrEqual(manager.budget);
        }
        expect(errors).toHaveLength(1);
        expect(errors[0]).toContain('"corrupt"');
        expect(await admin.hGet(`outage:${id}`, 'corrupt')).toBe(value);
        expect((await ownStore.get(id))?.version).toBeGreaterThan(0);
      } finally {
        await admin.close();
      }
    });
  }
});

/**
 * A lock acquire that the fail-open store gave up on (Redis stalled past the call's budget)
 * still sits in the client's queue, and lands when the server resumes. Issue 46's fault bench
 * (Redis SIGSTOPped 5 s) found calls waiting about 10 s for such a lock after the server came
 * back: nobody held it, it lapsed with its time to live. The late lock is now released as soon
 * as it lands. Real redis-server, stalled with SIGSTOP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionLock } from '../../src/core/session/session-store.js';
import { FailOpenStore } from '../../src/core/store/fail-open-store.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('late lock test');
let server: RedisTestServer;

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

describe.runIf(withRedis)('a lock acquire given up on while Redis is stalled', () => {
  it('is released when it lands: the session is not left locked for its time to live', async () => {
    const keyPrefix = `late-lock:${randomUUID()}:`;
    const store = redisSessionStore({ url: server.url, keyPrefix });
    // Another process's client on the same sessions.
    const other = redisSessionStore({ url: server.url, keyPrefix });
    await store.get('warm-up');
    await other.get('warm-up');
    const outages: string[] = [];
    const failOpen = new FailOpenStore(store, { timeoutMs: 200, onOutage: (key) => outages.push(key) });

    process.kill(server.pid, 'SIGSTOP');
    let lock: SessionLock | undefined;
    try {
      // A lock that would live 600 s: the call gives up on the stalled server after its budget.
      lock = await failOpen.within('s', () => failOpen.acquireLock('s', 600_000));
    } finally {
      process.kill(server.pid, 'SIGCONT');
    }
    // A lock of this process only (the store did not answer in time), and one outage.
    expect(lock?.token).toBeLessThan(0);
    expect(outages).toEqual(['s']);

    // The acquire sent during the stall lands now. Until the session's lock is free again
    // (on the old code: after its 600 s time to live).
    let next: SessionLock | undefined;
    while (!next) {
      next = await other.acquireLock('s', 10_000);
      if (!next) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(next.token).toBeGreaterThan(0);
    await next.release();
    await store.close();
    await other.close();
  });
});

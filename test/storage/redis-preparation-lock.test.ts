/**
 * The library's own cross-process preparation lock (background: true, no queue): three
 * managers, each with its own Redis client, serve one session and cross the preparation
 * threshold one after another (as unsynchronized processes do). One preparation runs per
 * summary version: the lock is the session's, so a manager that comes after the published
 * summary must find it rather than summarize the same version again (it did: 3 per version).
 */

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../../src/core/summary/summarizer.js';
import { type RedisSessionStore, redisSessionStore } from '../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('Redis preparation lock tests');
let server: RedisTestServer;
const stores: RedisSessionStore[] = [];

beforeAll(async () => {
  if (withRedis) server = await startRedisServer();
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await server?.stop();
});

describe.runIf(withRedis)('the preparation lock without a queue', () => {
  it('starts one preparation per session version across managers that cross the threshold in turn', async () => {
    const keyPrefix = `lock:${randomUUID()}:`;
    const calls: string[] = [];
    const managers = ['a', 'b', 'c'].map((name) => {
      const store = redisSessionStore({ url: server.url, keyPrefix });
      stores.push(store);
      return new CompactManager({
        maxContextTokens: 10_000,
        tokenCounter: charCounter,
        policy: { hardCapBuffer: 500 },
        store,
        storeTimeoutMs: 10_000,
        background: true,
        summarizer: {
          name: `summarizer-${name}`,
          summarize: async (request: SummarizeRequest) => {
            calls.push(name);
            return { text: `by ${name}: ${request.messages.length} messages` };
          },
        },
      });
    });
    const history = chatTurns(200);
    const idle = async (manager: CompactManager) => {
      // A preparation's work is asynchronous (lock, store, summarizer): wait until it settled.
      while (manager.backgroundStatus().running > 0) await new Promise((resolve) => setImmediate(resolve));
    };
    // 36 turns of 200 tokens: past prepareAtPct (0.7 of 10,000), under the trigger.
    for (const manager of managers) {
      const result = await manager.compact('s', history.slice(0, 72));
      expect(result.applied).toBe(false);
      await idle(manager);
    }
    expect(calls, 'one summarizer run for version 0').toHaveLength(1);
    const statuses = managers.map((manager) => manager.backgroundStatus());
    expect(statuses.reduce((sum, s) => sum + s.summarized, 0)).toBe(1);

    // The trigger (45 turns) on a manager that did not summarize: it swaps the published summary in.
    const other = managers.find((_, i) => statuses[i]!.summarized === 0)!;
    const triggered = await other.compact('s', history.slice(0, 90));
    expect(triggered.applied).toBe(true);
    expect(triggered.summary?.text).toContain(`by ${calls[0]}`);
    expect(other.backgroundStatus().used).toBe(1);
    expect(calls).toHaveLength(1);
    await Promise.all(managers.map((manager) => manager.shutdown()));
  });
});

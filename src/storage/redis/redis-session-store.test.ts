import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RedisTestServer,
  redisAvailable,
  startRedisServer,
} from '../../../test/support/redis-server.js';
import { isCompactError } from '../../core/errors.js';
import type { SessionState } from '../../core/session/session-store.js';
import { describeSessionStoreConformance } from '../../testing/session-store-conformance.js';
import { type RedisScriptClient, redisSessionStore } from './redis-session-store.js';

let server: RedisTestServer;
let admin: ReturnType<typeof createClient>;

const withRedis = redisAvailable('redisSessionStore tests');

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  admin = createClient({ url: server.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.close();
  await server?.stop();
});

const state = (version: number): SessionState => ({
  sessionId: 's',
  version,
  coveredIds: [`m-${version}`],
  updatedAt: version,
});

if (withRedis)
  describeSessionStoreConformance({
    name: 'redis (url)',
    shared: true,
    async create() {
      const keyPrefix = `conformance:${randomUUID()}:`;
      const stores = [redisSessionStore({ url: server.url, keyPrefix })];
      return {
        store: stores[0]!,
        async open() {
          const other = redisSessionStore({ url: server.url, keyPrefix });
          stores.push(other);
          return other;
        },
        close: async () => {
          await Promise.all(stores.map((store) => store.close()));
        },
      };
    },
  });

if (withRedis)
  describeSessionStoreConformance({
    name: 'redis (client)',
    async create() {
      return {
        store: redisSessionStore({ client: admin, keyPrefix: `client:${randomUUID()}:` }),
        close: async () => {},
      };
    },
  });

describe.runIf(withRedis)('redisSessionStore', () => {
  it('keeps one hash per session under the key prefix, the lock time from the server clock', async () => {
    const keyPrefix = `layout:${randomUUID()}:`;
    const store = redisSessionStore({ client: admin, keyPrefix });
    await store.set('s', state(3));
    const lock = await store.acquireLock('s', 60_000);
    expect(await admin.keys(`${keyPrefix}*`)).toEqual([`${keyPrefix}s`]);
    const hash = await admin.hGetAll(`${keyPrefix}s`);
    expect(JSON.parse(hash.state ?? '')).toEqual(state(3));
    expect(hash).toMatchObject({
      version: '3',
      rev: '1',
      fence: String(lock?.token),
      lock: String(lock?.token),
    });
    const until = Number(hash.lockUntil);
    const serverNow = Number(((await admin.sendCommand(['TIME'])) as string[])[0]) * 1000;
    expect(until - serverNow).toBeGreaterThan(50_000);
    expect(until - serverNow).toBeLessThanOrEqual(61_000);
    await store.delete('s');
    // The write counter outlives the state, as the fencing counter does (a revision never repeats).
    expect(await admin.hGetAll(`${keyPrefix}s`)).toEqual({
      rev: '2',
      fence: String(lock?.token),
      lock: String(lock?.token),
      lockUntil: String(until),
    });
  });

  it('loads its scripts again after SCRIPT FLUSH', async () => {
    const store = redisSessionStore({ client: admin, keyPrefix: `flush:${randomUUID()}:` });
    await store.set('s', state(1));
    await admin.scriptFlush();
    expect(await store.set('s', state(2), { expectedVersion: 1 })).toBe(true);
    expect(await store.get('s')).toEqual(state(2));
  });

  it('survives a restart of the process: a new client reads what the old one wrote', async () => {
    const keyPrefix = `restart:${randomUUID()}:`;
    const before = redisSessionStore({ url: server.url, keyPrefix });
    await before.set('s', state(5));
    await before.close();
    const after = redisSessionStore({ url: server.url, keyPrefix });
    expect(await after.get('s')).toEqual(state(5));
    await after.close();
  });

  it('wraps a server error as storage_failed, and wants a client or a url', async () => {
    const failing: RedisScriptClient = {
      evalSha: async () => {
        throw new Error('READONLY You can not write against a read only replica.');
      },
      eval: async () => 1,
    };
    const error = await redisSessionStore({ client: failing })
      .get('s')
      .catch((e: unknown) => e);
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect((error as Error).message).toContain('READONLY');
    expect(() => redisSessionStore({})).toThrow(/client or a url/);
    const down = redisSessionStore({ url: 'redis://127.0.0.1:1' });
    const refused = await down.get('s').catch((e: unknown) => e);
    expect(isCompactError(refused, 'storage_failed')).toBe(true);
    await down.close();
  });
});

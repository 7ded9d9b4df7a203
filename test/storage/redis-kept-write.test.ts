/**
 * A write that keeps the version (pins remembered: `pinnedIds`), made while Redis is down, is
 * kept by the fail-open store and written when the store answers again (its file comment:
 * "last state wins"). The flush wrote a kept state only over an older version, and since a
 * write claiming a new version is refused during an outage (issue 46) every kept write keeps
 * the version: a store that came back with its data dropped them all. Real redis-server,
 * stopped and restarted from its dump.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailOpenStore } from '../../src/core/session/fail-open-store.js';
import type { SessionState } from '../../src/core/session/session-store.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { until } from '../support/until.js';

const withRedis = redisAvailable('kept write test');

const stateOf = (pinnedIds?: string[]): SessionState => ({
  sessionId: 's',
  version: 1,
  coveredIds: ['a1', 'b1'],
  updatedAt: 1,
  ...(pinnedIds ? { pinnedIds } : {}),
});

describe.runIf(withRedis)('a write that keeps the version, made while Redis is down', () => {
  let server: RedisTestServer;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'compact-kept-write-'));
    server = await startRedisServer({ dir });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is written when the store comes back with its data', async () => {
    const store = redisSessionStore({ url: server.url, keyPrefix: 'kept:' });
    const other = redisSessionStore({ url: server.url, keyPrefix: 'kept:' });
    const failOpen = new FailOpenStore(store, { timeoutMs: 500, onOutage: () => {} });
    const raw = createClient({ url: server.url });
    await raw.connect();
    try {
      expect(await other.set('s', stateOf(), { expectedVersion: 0 })).toBe(true);
      expect(await failOpen.within('s', () => failOpen.get('s'))).toMatchObject({ version: 1 });
      await raw.sendCommand(['SAVE']);
      await raw.quit();
      const port = server.port;
      await server.stop();
      // Pins remembered during the outage: kept, to be written later.
      const kept = await failOpen.within('s', () =>
        failOpen.set('s', stateOf(['p1']), { expectedVersion: 1, fencingToken: -1 }),
      );
      expect(kept).toBe(true);
      expect(failOpen.pendingWrites).toBe(1);
      server = await startRedisServer({ port, dir });
      await until(async () => (await other.get('s').catch(() => null))?.version === 1, 'the restored state');
      await until(async () => {
        failOpen.retryNow();
        await failOpen.within('s', () => failOpen.get('s'));
        return failOpen.pendingWrites === 0;
      }, 'the kept write flushed');
      expect((await other.get('s'))?.pinnedIds).toEqual(['p1']);
      expect((await failOpen.within('s', () => failOpen.get('s')))?.pinnedIds).toEqual(['p1']);
    } finally {
      await other.close();
      await store.close();
    }
  });
});

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
import type { SessionState } from '../../src/core/session/session-store.js';
import { FailOpenStore } from '../../src/core/store/fail-open-store.js';
import { type RedisSessionStore, redisSessionStore } from '../../src/storage/redis/index.js';
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

  async function keptThroughRestart(prefix: string, meanwhile?: (other: RedisSessionStore) => Promise<void>) {
    const store = redisSessionStore({ url: server.url, keyPrefix: prefix });
    const other = redisSessionStore({ url: server.url, keyPrefix: prefix });
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
      await meanwhile?.(other);
      await until(async () => {
        failOpen.retryNow();
        await failOpen.within('s', () => failOpen.get('s'));
        return failOpen.pendingWrites === 0;
      }, 'the kept write flushed');
      return { stored: await other.get('s'), read: await failOpen.within('s', () => failOpen.get('s')) };
    } finally {
      await other.close();
      await store.close();
    }
  }

  it('is written when the store comes back with its data', async () => {
    const { stored, read } = await keptThroughRestart('kept-a:');
    expect(stored?.pinnedIds).toEqual(['p1']);
    expect(read?.pinnedIds).toEqual(['p1']);
  });

  it('leaves the state another process wrote at that version meanwhile, and adopts it', async () => {
    const theirs = { ...stateOf(['q1']), coveredIds: ['x1', 'y1'] };
    const { stored, read } = await keptThroughRestart('kept-b:', async (other) => {
      expect(await other.set('s', theirs, { expectedVersion: 1 })).toBe(true);
    });
    expect(stored).toEqual(theirs);
    expect(read).toEqual(theirs);
  });
});

/**
 * Issue 47: a process that read a session's state from a shared store skips the full read and
 * check of it on later calls while the store reports the same revision (getIfChanged), and
 * reads and checks it whole as soon as another process writes it: a new version, a change that
 * keeps the version and the length, a forged or corrupt state (refused as before). Real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager, type SessionState } from '../../src/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { countingUnchanged } from '../support/quick-resume-cases.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { until } from '../support/until.js';

const withRedis = redisAvailable('store revisions');

const stateOf = (version: number, coveredIds: string[]): SessionState => ({
  sessionId: 's',
  version,
  coveredIds,
  updatedAt: 1,
});

describe.runIf(withRedis)('a session state read from Redis, then written by another process', () => {
  let server: RedisTestServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function setup(prefix: string) {
    const mine = redisSessionStore({ url: server.url, keyPrefix: prefix });
    const other = redisSessionStore({ url: server.url, keyPrefix: prefix });
    const counted = countingUnchanged(mine);
    const corrupt: string[] = [];
    const manager = new CompactManager({ model: 'gpt-4o', store: counted });
    manager.on('compact.error', (event) => {
      corrupt.push(String((event.properties as { errorType?: string }).errorType));
    });
    expect(await other.set('s', stateOf(1, ['a1', 'b1']), { expectedVersion: 0 })).toBe(true);
    // Read whole once, then answered from the held copy while nothing moves.
    expect(await manager.state('s')).toMatchObject({ version: 1, coveredIds: ['a1', 'b1'] });
    expect(await manager.state('s')).toMatchObject({ version: 1, coveredIds: ['a1', 'b1'] });
    expect(counted.unchanged).toBe(1);
    const close = async () => {
      await manager.shutdown();
      await other.close();
      await mine.close();
    };
    return { manager, other, counted, corrupt, close };
  }

  it('sees a new version written by another process', async () => {
    const { manager, other, counted, close } = await setup('rev-a:');
    try {
      expect(await other.set('s', stateOf(2, ['a1', 'b1', 'c1']), { expectedVersion: 1 })).toBe(true);
      expect(await manager.state('s')).toMatchObject({ version: 2, coveredIds: ['a1', 'b1', 'c1'] });
      expect(counted.unchanged).toBe(1);
      expect(await manager.state('s')).toMatchObject({ version: 2 });
      expect(counted.unchanged).toBe(2);
    } finally {
      await close();
    }
  });

  it('sees a write that keeps the version and the length', async () => {
    const { manager, other, counted, close } = await setup('rev-b:');
    try {
      expect(await other.set('s', stateOf(1, ['a2', 'b2']), { expectedVersion: 1 })).toBe(true);
      expect(await manager.state('s')).toMatchObject({ version: 1, coveredIds: ['a2', 'b2'] });
      expect(counted.unchanged).toBe(1);
    } finally {
      await close();
    }
  });

  it('refuses a forged or corrupt state another process wrote, as a first read does', async () => {
    const { manager, counted, corrupt, close } = await setup('rev-c:');
    const { createClient } = await import('redis');
    const raw = createClient({ url: server.url });
    await raw.connect();
    try {
      // Valid JSON, wrong shape (a version that is not a count): refused and set aside.
      const forged = JSON.stringify({ sessionId: 's', version: -1, coveredIds: ['a1', 'b1'] });
      await raw.hSet('rev-c:s', { state: forged, version: '1' });
      // Never the forged state; this process's copy of v1 is written back (versions never go down).
      expect(await manager.state('s')).toEqual(stateOf(1, ['a1', 'b1']));
      expect(await raw.hGet('rev-c:s', 'corrupt')).toBe(forged);
      expect(corrupt).toEqual(['corrupt_state', 'storage_failed']);
      // Not JSON at all.
      await raw.hSet('rev-c:s', { state: '{"version":1,', version: '1' });
      expect(await manager.state('s')).toEqual(stateOf(1, ['a1', 'b1']));
      expect(await raw.hGet('rev-c:s', 'corrupt')).toBe('{"version":1,');
      expect(corrupt).toEqual(['corrupt_state', 'storage_failed', 'corrupt_state', 'storage_failed']);
      expect(counted.unchanged).toBe(1);
    } finally {
      await raw.quit();
      await close();
    }
  });

  it('reads whole again after its own write (the store holds what it wrote)', async () => {
    const { manager, counted, close } = await setup('rev-d:');
    try {
      await manager.reset('s');
      expect(await manager.state('s')).toBeUndefined();
      expect(counted.unchanged).toBe(1);
    } finally {
      await close();
    }
  });
});

/**
 * The revision is no write counter alone: a Redis restarted without its data (or from an older
 * snapshot) counts the writes again from zero, and a session recreated there at the same
 * version and length reaches the very revision a process read before the restart. That process
 * must read the new state, not serve its copy of the lost one.
 */
describe.runIf(withRedis)(
  'a session state read from Redis, then the server restarted without its data',
  () => {
    let server: RedisTestServer;
    beforeAll(async () => {
      server = await startRedisServer();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('reads the state written after the restart, whose revision counts from zero again', async () => {
      const mine = redisSessionStore({ url: server.url, keyPrefix: 'rev-e:' });
      const other = redisSessionStore({ url: server.url, keyPrefix: 'rev-e:' });
      const manager = new CompactManager({ model: 'gpt-4o', store: countingUnchanged(mine) });
      try {
        expect(await other.set('s', stateOf(1, ['a1', 'b1']), { expectedVersion: 0 })).toBe(true);
        expect(await manager.state('s')).toMatchObject({ version: 1, coveredIds: ['a1', 'b1'] });
        const port = server.port;
        await server.stop();
        server = await startRedisServer({ port });
        // Both clients reconnect (by themselves, with a backoff): wait for each to answer.
        await until(async () => (await other.get('s').catch(() => null)) === undefined, 'the other client');
        await until(async () => (await mine.get('s').catch(() => null)) === undefined, 'the manager client');
        // The session is started again there (a reused id): first write, version 1, same length.
        expect(await other.set('s', stateOf(1, ['a2', 'b2']), { expectedVersion: 0 })).toBe(true);
        expect(await manager.state('s')).toMatchObject({ version: 1, coveredIds: ['a2', 'b2'] });
      } finally {
        await manager.shutdown();
        await other.close();
        await mine.close();
      }
    });
  },
);

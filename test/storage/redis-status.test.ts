import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/cli/run-cli.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { cli } from '../support/cli-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

/** `agent-compaction status SESSION --store redis`: what a shared store holds for a session. */
const withRedis = redisAvailable('Redis status tests');
let server: RedisTestServer;

beforeAll(async () => {
  if (!withRedis) return;
  server = await startRedisServer();
  const store = redisSessionStore({ url: server.url });
  // The state must reach Redis: no fail-open fallback to the in-process copy on a busy machine.
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 4_000,
    store,
    failOnStorageError: true,
    storeTimeoutMs: 60_000,
  });
  await manager.compact('shared-1', syntheticSession({ turns: 20, seed: 4 }), { force: true });
  await manager.shutdown();
  await store.close();
});

afterAll(async () => {
  await server?.stop();
});

describe.runIf(withRedis)('status from a Redis session store', () => {
  it('prints the stored summary, what it covers and when it changed; --json gives the state', async () => {
    const run = await cli(['status', 'shared-1', '--store', 'redis'], '', { REDIS_URL: server.url });
    expect(run.code).toBe(EXIT_CODES.ok);
    expect(run.stdout).toMatch(/^session: shared-1 \(Redis store\), state version \d+, updated \d{4}-/);
    expect(run.stdout).toMatch(/covered by the summary: [1-9][\d,]* messages/);
    expect(run.stdout).toMatch(/summary v1: [\d,]+ tokens, embedded, /);
    const json = JSON.parse(
      (await cli(['status', 'shared-1', '--store', 'redis', '--json'], '', { REDIS_URL: server.url })).stdout,
    );
    expect(json.sessionId).toBe('shared-1');
    expect(json.summary.text.length).toBeGreaterThan(0);
  });

  it('an unknown session, a missing URL or another store: one line and exit 2', async () => {
    for (const [argv, env, message] of [
      [['status', 'nobody', '--store', 'redis'], { REDIS_URL: server.url }, /no session "nobody"/],
      [['status', 'shared-1', '--store', 'redis'], {}, /REDIS_URL, which is not set/],
      [
        ['status', 'shared-1', '--store', 'redis', '--redis-url-env', 'MY_REDIS'],
        { REDIS_URL: server.url },
        /MY_REDIS/,
      ],
      [['status', 'shared-1', '--store', 'memcached'], {}, /--store must be redis/],
    ] as const) {
      const run = await cli([...argv], '', env);
      expect(run.code, argv.join(' ')).toBe(EXIT_CODES.badInput);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

/**
 * Issue 46 point 4: versions never go down. A real redis-server restarted without
 * persistence loses every session: the next call of a process that knew the session writes
 * its copy back (the highest copy among processes wins), so the next summary is numbered
 * after the last one, never v1 again; one `compact.error` says the store lost the state.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyCompactEvent, CompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RedisSessionStore, redisSessionStore } from '../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../support/background-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';

const withRedis = redisAvailable('versions-never-go-down tests');
const servers: RedisTestServer[] = [];
const stores: RedisSessionStore[] = [];

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(servers.map((server) => server.stop()));
});

function versionsSent(messages: unknown): number[] {
  return [...JSON.stringify(messages).matchAll(/<COMPACT-SUMMARY v(\d+)>/g)].map((m) => Number(m[1]));
}

describe.runIf(withRedis)('versions never go down (issue 46.4)', () => {
  it('resumes the version floor after Redis restarts without persistence', async () => {
    let server = await startRedisServer();
    servers.push(server);
    const keyPrefix = `floor:${randomUUID()}:`;
    const options = (store: RedisSessionStore) => ({
      maxContextTokens: 3_000,
      tokenCounter: charCounter,
      store,
      policy: { hardCapBuffer: 100, maxSummaryTokens: 200 },
      // Generous: a loaded machine must not turn the restart into an outage.
      storeTimeoutMs: 10_000,
    });
    const storeA = redisSessionStore({ url: server.url, keyPrefix });
    const storeB = redisSessionStore({ url: server.url, keyPrefix });
    stores.push(storeA, storeB);
    const a = new CompactManager(options(storeA));
    const b = new CompactManager(options(storeB));
    const events: AnyCompactEvent[] = [];
    a.on('*', (event) => events.push(event as AnyCompactEvent));
    let messages = chatTurns(16, 100);
    let highest = 0;
    for (let step = 0; step < 3; step++) {
      const result = await a.manualCompact('s', messages);
      highest = Math.max(highest, result.version);
      messages = [...messages, ...chatTurns(4, 100, `a${step}`)];
    }
    // b has seen the session too, at an older version.
    expect((await b.compact('s', messages)).version).toBe(highest);
    expect(highest).toBeGreaterThanOrEqual(3);

    // Restart without persistence, on the same port: the clients reconnect to an empty server.
    const port = server.port;
    await server.stop();
    server = await startRedisServer({ port });
    servers.push(server);
    const raw = redisSessionStore({ url: server.url, keyPrefix });
    stores.push(raw);
    expect(await raw.get('s')).toBeUndefined();

    // The clients reconnect (until then calls go on from each process's copy): until each
    // answers, however long a loaded machine takes (the test's timeout bounds a hang).
    for (const store of [storeA, storeB])
      for (;;) {
        const answered = await store.get('probe').then(
          () => true,
          () => false,
        );
        if (answered) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    messages = [...messages, ...chatTurns(4, 100, 'after')];
    const result = await a.compact('s', messages);
    expect(result.version).toBeGreaterThanOrEqual(highest);
    for (const version of versionsSent(result.messages)) expect(version).toBeGreaterThanOrEqual(highest);
    const forced = await a.manualCompact('s', messages);
    expect(forced.version).toBe(Math.max(highest, result.version) + 1);
    expect((await raw.get('s'))?.version).toBe(forced.version);
    // b, which knew an older copy, never sends a version below what it saw.
    const fromB = await b.compact('s', [...messages, ...chatTurns(1, 100, 'b')]);
    for (const version of versionsSent(fromB.messages)) expect(version).toBeGreaterThanOrEqual(highest);
    const lost = events.filter(
      (event) =>
        event.name === 'compact.error' &&
        (event as CompactEvent<'compact.error'>).properties.message.includes('lost the state'),
    );
    expect(lost.length).toBeGreaterThanOrEqual(1);
    await a.shutdown();
    await b.shutdown();
  });
});

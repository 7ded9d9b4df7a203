/**
 * A session's stored state found corrupt (a torn or foreign JSON text in Redis): the store sets
 * it aside and raises `corrupt_state`, and the session goes on as new. The fail-open store
 * forgot the session at that point without reading the archive's version floor, and without
 * this process's own copy: the next summary was v1 again, a second `summary-001` (then a
 * second `summary-002`) beside the archived ones, in a fresh process and in the one that had
 * just sent v2 (docs/sessions.md, "Versions never go down"). A state found corrupt by the
 * fail-open store's own check already resumed above the floor.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { CompactError } from '../../src/core/errors.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SessionState, SessionStore } from '../../src/core/session/session-store.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { JsonTextStore } from '../support/hostile-store.js';
import { charCounter, chatTurns, collect } from '../support/manager-fixtures.js';
import { redisAvailable, startRedisServer } from '../support/redis-server.js';
import { useTempDirs } from '../support/temp-dirs.js';

const withRedis = redisAvailable('corrupt state floor test');
const tempDir = useTempDirs();

/** A JSON-text store that refuses a text it cannot read as Redis does: set aside, `corrupt_state`. */
class CheckingTextStore extends JsonTextStore {
  override async get(sessionId: string): Promise<SessionState | undefined> {
    const text = this.texts.get(sessionId);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as SessionState;
    } catch {
      this.texts.delete(sessionId);
      throw new CompactError('corrupt_state', `the stored state of ${sessionId} is not JSON`);
    }
  }
}

const history = chatTurns(20, 30);
const managerOn = (store: SessionStore, archive: string) =>
  new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    store,
    storage: fsStorage({ path: archive }),
    // A loaded machine must not take a slow answer for an outage (the test is about the floor).
    storeTimeoutMs: 600_000,
  });

/** Compacts to v2, tears the stored state, compacts twice more (on `next()`, or the same manager). */
async function tearAndGoOn(
  store: () => SessionStore,
  archive: string,
  tear: () => Promise<void>,
  fresh: boolean,
): Promise<AnyCompactEvent[]> {
  const first = managerOn(store(), archive);
  expect((await first.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  expect((await first.manualCompact('chat', history.slice(0, 16))).version).toBe(2);
  await tear();
  let manager = first;
  if (fresh) {
    await first.shutdown();
    manager = managerOn(store(), archive);
  }
  const events = collect(manager);
  expect((await manager.manualCompact('chat', history.slice(0, 20))).version).toBe(3);
  expect((await manager.manualCompact('chat', history.slice(0, 24))).version).toBe(4);
  await manager.shutdown();
  const steps = (await readdir(join(archive, 'chat')))
    .filter((f) => f.startsWith('summary-'))
    .map((f) => f.slice(0, 11));
  expect(steps.sort()).toEqual(['summary-001', 'summary-002', 'summary-003', 'summary-004']);
  return events;
}

const corruptErrors = (events: AnyCompactEvent[]) =>
  events.filter((e) => e.name === 'compact.error' && JSON.stringify(e.properties).includes('corrupt'));

describe('a stored state found corrupt resumes above the archived summaries', () => {
  for (const fresh of [true, false]) {
    it(`a store raising corrupt_state (${fresh ? 'a fresh process' : 'the process that sent v2'})`, async () => {
      const archive = await tempDir('corrupt-floor-');
      const store = new CheckingTextStore();
      const events = await tearAndGoOn(
        () => store,
        archive,
        async () => {
          store.texts.set('chat', '{"sessionId":"chat","vers');
        },
        fresh,
      );
      expect(corruptErrors(events)).toHaveLength(1);
    });
  }

  it.runIf(withRedis)('Redis holding a torn state: v3 and v4 follow v2, in a fresh process', async () => {
    const archive = await tempDir('corrupt-floor-archive-');
    const server = await startRedisServer({ dir: await tempDir('corrupt-floor-redis-') });
    try {
      const events = await tearAndGoOn(
        () => redisSessionStore({ url: server.url, keyPrefix: 'torn:' }),
        archive,
        async () => {
          const raw = createClient({ url: server.url });
          await raw.connect();
          await raw.hSet('torn:chat', 'state', '{"sessionId":"chat","vers');
          await raw.quit();
        },
        true,
      );
      expect(corruptErrors(events)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});

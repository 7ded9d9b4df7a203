/**
 * A store that comes back holding an older state than versions already sent: Redis restarted
 * from a dump taken before the last compactions (RDB snapshots lag by design), or a `--state`
 * file / in-process store filled from a backup. A process that never held the session read
 * that state and numbered its next summary above it only, so v3 got a second text and a second
 * `summary-003` in the archive beside the first (docs/sessions.md, "Versions never go down":
 * the archive's floor was read only when the store held nothing). Real redis-server, SAVEd
 * after v2, killed after v4 and restarted from its dump.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../../src/core/archive/storage-adapter.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore, type SessionStore } from '../../src/core/session/session-store.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { charCounter, chatTurns, collect } from '../support/manager-fixtures.js';
import { redisAvailable, startRedisServer } from '../support/redis-server.js';
import { useTempDirs } from '../support/temp-dirs.js';

const withRedis = redisAvailable('older store floor test');
const tempDir = useTempDirs();

const history = chatTurns(20, 30);
const managerOn = (store: SessionStore, storage: StorageAdapter) =>
  new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    store,
    storage,
  });
const floorWarnings = (events: AnyCompactEvent[]) =>
  events.filter(
    (e) => e.name === 'compact.warning' && (e.properties as { code: string }).code === 'version_floor',
  );

/** Compacts to v2, runs `snapshot`, compacts to v4: the store's older copy is the snapshot's. */
async function compactToV4(manager: CompactManager, snapshot: () => Promise<void>) {
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  expect((await manager.manualCompact('chat', history.slice(0, 16))).version).toBe(2);
  await snapshot();
  expect((await manager.manualCompact('chat', history.slice(0, 20))).version).toBe(3);
  expect((await manager.manualCompact('chat', history.slice(0, 24))).version).toBe(4);
  await manager.shutdown();
}

/** A process that never held the session compacts it: v5, one text per version in the archive. */
async function nextIsV5(manager: CompactManager, archive: string) {
  const events = collect(manager);
  const result = await manager.manualCompact('chat', history.slice(0, 28));
  await manager.shutdown();
  expect(result.version).toBe(5);
  expect(result.summary?.local).not.toBe(true);
  expect(floorWarnings(events)).toHaveLength(1);
  const steps = (await readdir(join(archive, 'chat')))
    .filter((f) => f.startsWith('summary-'))
    .map((f) => f.slice(0, 11));
  expect(steps.sort()).toEqual(['summary-001', 'summary-002', 'summary-003', 'summary-004', 'summary-005']);
}

describe('a store holding an older state than the archive', () => {
  it.runIf(withRedis)(
    'Redis restarted from an older dump: the next summary is v5, not a second v3',
    async () => {
      const dir = await tempDir('older-dump-redis-');
      const archive = await tempDir('older-dump-archive-');
      let server = await startRedisServer({ dir });
      const store = () => redisSessionStore({ url: server.url, keyPrefix: 'older:' });
      try {
        await compactToV4(managerOn(store(), fsStorage({ path: archive })), async () => {
          const raw = createClient({ url: server.url });
          await raw.connect();
          await raw.sendCommand(['SAVE']);
          await raw.quit();
        });
        const port = server.port;
        await server.stop();
        server = await startRedisServer({ port, dir });
        const restored = store();
        expect((await restored.get('chat'))?.version).toBe(2);
        await restored.close();
        await nextIsV5(managerOn(store(), fsStorage({ path: archive })), archive);
      } finally {
        await server.stop();
      }
    },
  );

  it('an in-process store filled from an older copy (a --state file): the next summary is v5', async () => {
    const archive = await tempDir('older-copy-archive-');
    const first = new MemorySessionStore();
    const older = new MemorySessionStore();
    await compactToV4(managerOn(first, fsStorage({ path: archive })), async () => {
      await older.set('chat', (await first.get('chat'))!);
    });
    expect((await older.get('chat'))?.version).toBe(2);
    await nextIsV5(managerOn(older, fsStorage({ path: archive })), archive);
  });
});

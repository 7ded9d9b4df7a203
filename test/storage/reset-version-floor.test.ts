/**
 * `reset` with the default in-process store and an archive that lists its summaries. The store
 * read the archive's version floor only on the first read of a session in the process, and
 * remembered every session read: after `reset` deleted the state, the next compaction took v1
 * again, a second `summary-001` (and `sum-v1` artifact, which recall then answers with the new
 * originals) beside the first (docs/sessions.md, "Versions never go down": only a session whose
 * archive holds no summary starts at v1 again). The fail-open store (any other store) read
 * the floor again after a delete. The sessions remembered also grew without bound.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import { ArchiveFloorStore } from '../../src/core/store/archive-floor-store.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { charCounter, chatTurns } from '../support/manager-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it('after reset, the in-process store resumes above the archived summaries: no second summary-001', async () => {
  const archive = await mkdtemp(join(tmpdir(), 'reset-floor-'));
  dirs.push(archive);
  const manager = new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    storage: fsStorage({ path: archive }),
  });
  const history = chatTurns(20, 30);
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  expect((await manager.manualCompact('chat', history.slice(0, 16))).version).toBe(2);
  await manager.reset('chat');
  const again = await manager.manualCompact('chat', history.slice(0, 12));
  await manager.shutdown();
  const steps = (await readdir(join(archive, 'chat')))
    .filter((f) => f.startsWith('summary-'))
    .map((f) => f.slice(0, 11));
  expect(steps.sort()).toEqual(['summary-001', 'summary-002', 'summary-003']);
  expect(again.version).toBe(3);
});

it('the sessions whose floor was read are bounded: a session read long ago reads it again', async () => {
  const asked: string[] = [];
  const floor = async (key: string) => {
    asked.push(key);
    return undefined;
  };
  const store = new ArchiveFloorStore(new MemorySessionStore(), floor, 1_000, () => {});
  for (let i = 0; i <= 20_000; i++) await store.get(`s${i}`);
  await store.get('s0');
  expect(asked.filter((key) => key === 's0')).toHaveLength(2);
});

/**
 * A compaction archives its summary before the store grants its version (a crash between the
 * two leaves a summary no state holds, never a stored version without its file). When the
 * store's write fails (Redis killed or timing out mid-call), the call is answered locally and
 * `summary-002` stays in the archive though v2 was never granted. Once the store answered again
 * (no outage read in between), the next compaction took v2 from the store: a second
 * `summary-002`, with another text, beside the first. Now the version archived is lifted to
 * when the store answers, as a version answered during an outage is.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { HostileStore, JsonTextStore } from '../support/hostile-store.js';
import { charCounter, chatTurns } from '../support/manager-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it('a summary archived for a version the store then refused is never archived again under that version', async () => {
  const archive = await mkdtemp(join(tmpdir(), 'unstored-summary-'));
  dirs.push(archive);
  const store = new HostileStore(new JsonTextStore());
  const manager = new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    store,
    storage: fsStorage({ path: archive }),
  });
  const history = chatTurns(20, 30);
  expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  // The state write of the next compaction fails: a local answer, claiming no version.
  store.faults.writes = 1;
  const local = await manager.manualCompact('chat', history.slice(0, 16));
  expect(local.summary?.local).toBe(true);
  // The session's next call comes after the store's cool-down (the clock moved on a minute):
  // the store answers it.
  const realNow = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => realNow() + 60_000);
  const next = await manager.manualCompact('chat', history.slice(0, 24));
  await manager.shutdown();
  expect(next.summary?.local).not.toBe(true);
  const steps = (await readdir(join(archive, 'chat')))
    .filter((f) => f.startsWith('summary-'))
    .map((f) => f.slice(0, 11));
  expect(steps.filter((step) => step === 'summary-002')).toHaveLength(1);
  expect(next.version).toBe(3);
});

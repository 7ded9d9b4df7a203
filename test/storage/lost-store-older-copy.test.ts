/**
 * A shared store that lost its data (Redis restarted without persistence) is given back the
 * copy of the first process that calls (docs/sessions.md, "Versions never go down"). When that
 * process's copy is older than versions another process sent since (it last saw v2, the other
 * sent v3 and v4), the copy was written back as it was and the next summary was v3 again,
 * beside the archived v3: the archive's floor was never read on that path. A store kept as
 * JSON texts (`JsonTextStore`), emptied as a restarted Redis is.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { JsonTextStore } from '../support/hostile-store.js';
import { charCounter, chatTurns, collect } from '../support/manager-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

it('a process whose copy is older than the archive numbers its next summary above the archive', async () => {
  const archive = await mkdtemp(join(tmpdir(), 'lost-store-older-copy-'));
  dirs.push(archive);
  const store = new JsonTextStore();
  const managerOn = () =>
    new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      store,
      storage: fsStorage({ path: archive }),
    });
  const history = chatTurns(20, 30);
  const a = managerOn();
  const b = managerOn();
  expect((await a.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
  expect((await a.manualCompact('chat', history.slice(0, 16))).version).toBe(2);
  // b holds the session at v2; a goes on to v4.
  expect((await b.compact('chat', history.slice(0, 17))).version).toBe(2);
  expect((await a.manualCompact('chat', history.slice(0, 20))).version).toBe(3);
  expect((await a.manualCompact('chat', history.slice(0, 24))).version).toBe(4);
  await a.shutdown();
  // The store comes back empty; b is the first to call.
  store.texts.clear();
  const events = collect(b);
  const result = await b.manualCompact('chat', history.slice(0, 28));
  await b.shutdown();
  expect(result.version).toBe(5);
  expect(events.some((e) => e.name === 'compact.error' && JSON.stringify(e).includes('lost the state'))).toBe(
    true,
  );
  const steps = (await readdir(join(archive, 'chat')))
    .filter((f) => f.startsWith('summary-'))
    .map((f) => f.slice(0, 11));
  expect(steps.sort()).toEqual(['summary-001', 'summary-002', 'summary-003', 'summary-004', 'summary-005']);
});

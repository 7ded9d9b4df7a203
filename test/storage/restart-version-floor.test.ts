/**
 * A restarted process with the default in-process session store and an fs archive: the
 * archive holds the session's summaries, so the next summary is numbered above them
 * (docs/sessions.md, "Versions never go down"), never v1 again beside the old v1. Real files.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { RecallArchive } from '../../src/recall/recall-archive.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { charCounter, chatTurns, collect } from '../support/manager-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const managerOn = (path: string, recall = false) =>
  new CompactManager({
    maxContextTokens: 100_000,
    tokenCounter: charCounter,
    policy: { userTextShare: 0 },
    // docs/recall.md: the manager writes through the recall archive's storage.
    storage: recall ? new RecallArchive(fsStorage({ path })).storage : fsStorage({ path }),
  });

describe.each([
  ['an fs archive', false],
  ['an fs archive behind RecallArchive', true],
])('a restarted process on %s (in-process session store)', (_name, recall) => {
  it('numbers its next summary above the archived ones, with one version_floor warning', async () => {
    const path = await mkdtemp(join(tmpdir(), 'restart-floor-'));
    dirs.push(path);
    const history = chatTurns(10, 30);
    const first = managerOn(path, recall);
    expect((await first.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
    expect((await first.manualCompact('chat', history)).version).toBe(2);
    await first.shutdown();

    const restarted = managerOn(path, recall);
    const events = collect(restarted);
    const result = await restarted.manualCompact('chat', [...history, ...chatTurns(2, 30)]);
    await restarted.flush();
    await restarted.shutdown();
    expect(result.version).toBe(3);
    expect(
      events.filter(
        (e) => e.name === 'compact.warning' && (e.properties as { code: string }).code === 'version_floor',
      ),
    ).toHaveLength(1);
    const summaries = (await readdir(join(path, 'chat'))).filter((f) => f.startsWith('summary-'));
    expect(summaries.map((f) => f.slice(0, 11)).sort()).toEqual([
      'summary-001',
      'summary-002',
      'summary-003',
    ]);
  });
});

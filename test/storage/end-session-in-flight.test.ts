/**
 * `endSession` (or the memory caps evicting the session) while a compaction of the session is
 * in flight, with a shared store and an archive. The fail-open store forgot its copy of the
 * session, so the compaction's last read before its compare-and-set took the session for one
 * new to the process and read the archive's floor: the summary the compaction had just archived
 * for its own next version. The store was lifted to that version (a state without a summary),
 * the compaction's own write then failed as if another process had landed first
 * (`concurrent_compaction`), its summary was thrown away and the call answered from a state
 * that covers nothing. Now a session's copy stays while a call of it runs.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { JsonTextStore } from '../support/hostile-store.js';
import { charCounter, chatTurns, collect } from '../support/manager-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

for (const failOnStorageError of [false, true])
  it(`endSession during a compaction: the compaction stores its version, no concurrent_compaction${failOnStorageError ? ' (failing closed)' : ''}`, async () => {
    const archive = await mkdtemp(join(tmpdir(), 'end-in-flight-'));
    dirs.push(archive);
    let hold: Promise<void> | undefined;
    let entered: (() => void) | undefined;
    const summarizing = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => {};
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      store: new JsonTextStore(),
      failOnStorageError,
      // A loaded machine must not take a slow answer for an outage.
      storeTimeoutMs: 600_000,
      storage: fsStorage({ path: archive }),
      summarizer: {
        name: 'held',
        summarize: async () => {
          if (hold) {
            entered?.();
            await hold;
          }
          return { text: '## Task\n- the work so far' };
        },
      },
    });
    const history = chatTurns(20, 30);
    expect((await manager.manualCompact('chat', history.slice(0, 12))).version).toBe(1);
    expect((await manager.manualCompact('chat', history.slice(0, 16))).version).toBe(2);
    hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const events: AnyCompactEvent[] = collect(manager);
    const third = manager.manualCompact('chat', history.slice(0, 20));
    await summarizing;
    manager.endSession('chat');
    release();
    const result = await third;
    await manager.shutdown();
    expect(events.filter((e) => e.name === 'compact.error').map((e) => e.properties)).toEqual([]);
    expect(result.version).toBe(3);
    expect(JSON.stringify(result.messages)).toContain('<COMPACT-SUMMARY v3>');
    const steps = (await readdir(join(archive, 'chat')))
      .filter((f) => f.startsWith('summary-'))
      .map((f) => f.slice(0, 11));
    expect(steps.sort()).toEqual(['summary-001', 'summary-002', 'summary-003']);
  });

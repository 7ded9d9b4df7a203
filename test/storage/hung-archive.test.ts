/**
 * An archive write that never settles (a custom adapter that hangs, a hung network mount) is
 * given up after `archiveTimeoutMs`: the call goes on, the failure is one `compact.error`
 * (`storage_failed`), `requireArchive` blocks pruning, `flush()` returns, the caller's messages
 * are untouched, and once the adapter answers again the next writes land and the recovery is
 * reported, with nothing earlier overwritten. The write given up has its signal aborted
 * (`ArchiveWriteOptions`): an adapter that honours it (memory, fs, S3) writes nothing more.
 */
import { execFileSync } from 'node:child_process';
import { constants, existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ArchiveWriteOptions, StorageAdapter } from '../../src/core/archive/storage-adapter.js';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/index.js';
import { memoryStorage } from '../../src/storage/memory/index.js';
import { safeSessionSegment } from '../../src/storage/session-path.js';
import { sampleCompactionEvents } from '../../src/testing/sample-events.js';
import { charCounter, toolTurns } from '../support/manager-fixtures.js';
import { useTempDirs } from '../support/temp-dirs.js';

const makeDir = useTempDirs();
/** A FIFO a test's append waits on; after the test, the reader it waits for lets its thread go. */
let fifo: string | undefined;
afterEach(async () => {
  if (fifo === undefined) return;
  const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  await reader.close();
  fifo = undefined;
});

/** An archive root whose session `s` logs its events to a FIFO: opening it to write blocks in the kernel until a reader comes (as on a hung mount). */
async function fifoEventLog(): Promise<string> {
  const root = await makeDir('compact-hung-fs-');
  const session = join(root, safeSessionSegment('s'));
  await mkdir(session, { mode: 0o700 });
  fifo = join(session, 'events.jsonl');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  return root;
}

/** True when a thread of this process sleeps in the kernel function `wchan`. */
async function threadWaits(wchan: string): Promise<boolean> {
  for (const task of await readdir('/proc/self/task')) {
    const where = await readFile(`/proc/self/task/${task}/wchan`, 'utf8').catch(() => '');
    if (where === wchan) return true;
  }
  return false;
}

/**
 * A memory archive whose writes do not settle while `hung` is set (as on a hung mount); held
 * writes land when `release()` is called, late, as a mount that comes back would write them.
 * `signals` are the write options' signals of the writes held, `answered` those of the writes
 * run at once. With `dropSignal` the adapter
 * is one of the old contract: it never hands the signal on, so writes given up land late.
 */
function hangingStorage(dropSignal = false) {
  const inner = memoryStorage();
  const hung = { on: true };
  const held: (() => Promise<void>)[] = [];
  const signals: AbortSignal[] = [];
  const answered: AbortSignal[] = [];
  const hold = <R>(
    options: ArchiveWriteOptions | undefined,
    write: (handed: ArchiveWriteOptions | undefined) => Promise<R>,
  ): Promise<R> => {
    const handed = dropSignal ? undefined : options;
    if (!hung.on) {
      if (options?.signal) answered.push(options.signal);
      return write(handed);
    }
    if (options?.signal) signals.push(options.signal);
    return new Promise<R>((resolve, reject) => held.push(() => write(handed).then(resolve, reject)));
  };
  const storage: StorageAdapter = {
    name: 'hanging',
    saveTranscript: (id, messages, step, options) =>
      hold(options, (o) => inner.saveTranscript(id, messages, step, o)),
    saveSummary: (id, summary, step, options) =>
      hold(options, (o) => inner.saveSummary(id, summary, step, o)),
    saveEvent: (id, event, options) => hold(options, (o) => inner.saveEvent(id, event, o)),
    saveArtifact: (id, artifact, options) => hold(options, (o) => inner.saveArtifact(id, artifact, o)),
    loadArtifact: (id, ref) => inner.loadArtifact(id, ref),
    latestSummaryStep: (id) => inner.latestSummaryStep!(id),
  };
  /** Lets the held writes run (they settle, landed or refused); later writes run at once. */
  const release = async () => {
    hung.on = false;
    await Promise.allSettled(held.splice(0).map((write) => write()));
  };
  return { storage, inner, release, signals, answered };
}

/** Compacts ever longer tool histories of session `s` until one is pruned; the caller's messages stay as they were. */
async function compactUntilPruned(target: CompactManager, seed: string, from = 10): Promise<number> {
  for (let turns = from; turns <= from + 30; turns++) {
    const messages = toolTurns(turns, seed);
    const before = JSON.stringify(messages);
    const result = await target.compact('s', messages);
    expect(JSON.stringify(messages)).toBe(before);
    expect(result.tokensAfter).toBeLessThanOrEqual(target.budget);
    if (result.tokensAfter < result.tokensBefore) return turns;
  }
  throw new Error('no compaction pruned anything');
}

function manager(storage: StorageAdapter, extra: Record<string, unknown> = {}) {
  return new CompactManager({
    maxContextTokens: 6_000,
    tokenCounter: charCounter,
    storage,
    archiveTimeoutMs: 20,
    policy: { keepRecentTurns: 2, keepToolIoPairs: 1, hardCapBuffer: 300 },
    ...extra,
  });
}

describe('an archive write that never settles', () => {
  it('is given up: the call goes on, one storage_failed, flush returns, recovery lands later', async () => {
    // An adapter of the contract before write signals: what was given up runs on and lands late.
    const { storage, inner, release } = hangingStorage(true);
    const target = manager(storage);
    const events: { properties: Record<string, unknown> }[] = [];
    target.on('compact.error', (event) => events.push(event));
    target.on('compact.warning', (event) => events.push(event));
    await compactUntilPruned(target, 'x');
    await target.flush();
    const failures = events.filter((e) => e.properties.errorType === 'storage_failed');
    expect(failures).toHaveLength(1);
    expect(String(failures[0]!.properties.message)).toMatch(/did not settle within 20 ms/);
    // The adapter answers again: the next compaction's writes land and the outage ends once.
    await release();
    for (let turns = 41; turns <= 80; turns++) {
      const result = await target.compact('s', toolTurns(turns, 'x'));
      if (
        events.some((e) => e.properties.code === 'storage_recovered') &&
        result.tokensAfter < result.tokensBefore
      )
        break;
    }
    await target.flush();
    expect(events.filter((e) => e.properties.code === 'storage_recovered')).toHaveLength(1);
    // The writes given up landed late, each under its own name: none overwrote another.
    const archived = inner.snapshot('s')!;
    expect(archived.superseded).toEqual([]);
    expect(archived.transcripts.size).toBeGreaterThanOrEqual(2);
    await target.shutdown();
  });

  it("aborts each write's signal when it gives the write up; nothing given up lands later", async () => {
    const { storage, inner, release, signals, answered } = hangingStorage();
    const target = manager(storage);
    const turns = await compactUntilPruned(target, 'z');
    await target.flush();
    expect(signals.length).toBeGreaterThan(0);
    for (const signal of signals) {
      expect(signal.aborted).toBe(true);
      expect(isCompactError(signal.reason, 'storage_failed')).toBe(true);
      expect(String((signal.reason as Error).message)).toMatch(
        /did not settle within 20 ms \(archiveTimeoutMs\)/,
      );
    }
    // The held writes reach the memory archive now, their signals aborted: it stores none.
    await release();
    expect(inner.snapshot('s')).toBeUndefined();
    // Writes the adapter answers keep a signal never aborted, and land.
    await compactUntilPruned(target, 'z', turns + 1);
    await target.shutdown();
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.filter((signal) => signal.aborted)).toEqual([]);
    expect(inner.snapshot('s')!.transcripts.size).toBeGreaterThanOrEqual(1);
  });

  it('an fs archive whose event log never opens (a FIFO, as a hung mount): shutdown returns', async () => {
    const root = await fifoEventLog();
    const target = manager(fsStorage({ path: root }));
    const errors: string[] = [];
    target.on('compact.error', (event) => errors.push(String(event.properties.message)));
    await compactUntilPruned(target, 'f');
    await target.flush();
    expect(errors.join('\n')).toMatch(/archive failed: .*did not settle within 20 ms/);
    // Old code: waited here for good (the adapter's close drained the hung append).
    await target.shutdown();
  }, 60_000);

  it("the fs adapter's close does not wait for an append given up while stuck in the kernel", async ({
    skip,
  }) => {
    if (!existsSync('/proc/self/task')) skip('no /proc/self/task: cannot see a thread stuck in open');
    const root = await fifoEventLog();
    const storage = fsStorage({ path: root });
    const controller = new AbortController();
    const stuck = storage.saveEvent('s', sampleCompactionEvents({ sessionId: 's' })[0]!, {
      signal: controller.signal,
    });
    stuck.catch(() => {});
    // The event waited for: a thread of this process blocked opening the FIFO.
    while (!(await threadWaits('wait_for_partner'))) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('given up'));
    // Old fs adapter: close drained the stuck append and never returned.
    await storage.close!();
  }, 60_000);

  it('with requireArchive: storage_failed, nothing pruned', async () => {
    const { storage } = hangingStorage();
    const target = manager(storage, { requireArchive: true });
    let error: unknown;
    for (let turns = 10; turns <= 40 && error === undefined; turns++) {
      error = await target.compact('s', toolTurns(turns, 'y')).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect(String((error as Error).message)).toMatch(/did not settle.*nothing was pruned/);
    expect(await target.state('s')).toBeUndefined();
  });

  it('archiveTimeoutMs out of range is invalid_config naming the field', () => {
    for (const bad of [0, -1, 1.5, 700_000, '10'])
      expect(() => manager(memoryStorage(), { archiveTimeoutMs: bad })).toThrow(
        expect.objectContaining({
          code: 'invalid_config',
          message: expect.stringMatching(/archiveTimeoutMs/),
        }),
      );
  });
});

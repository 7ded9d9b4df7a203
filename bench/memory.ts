/**
 * `npx tsx bench/memory.ts [--sessions=1000]` (also in `npm run bench`): what a long-lived
 * manager holds after serving many sessions, after `endSession` on half of them, and after
 * `shutdown()` (issue 47 point 4). The stored states are deleted before each measure: the store
 * stands for one outside the process.
 *
 * Baselines. The rows while sessions are held count from after the tokenizer's load and a
 * warm-up session. The rows after shutdown count from this same process before it made the
 * manager: the library imported (its modules' top-level code run), nothing of it called, and
 * this bench's own GC driver run once (so that its code is in the baseline too). That is the
 * heap a fresh process that imports the library starts from.
 *
 * After shutdown, three readings: (1) right after it, after forced full collections; (2) after
 * {@link AGED_GCS} more major collections the heap starts itself, as a long-running process
 * goes through; (3) as (2) with V8's baseline-code flushing turned on. V8 drops the bytecode of
 * a function not run for `--bytecode-old-age` (5 in Node 20) major collections, aging it once
 * per collection; a forced `gc()` never ages it (V8 keeps ages during forced and heap-profiler
 * collections), hence the collections the heap starts itself, driven here by short-lived
 * allocations. Node 20 leaves `--flush-baseline-code` off: a function Sparkplug compiled keeps
 * its machine code however long it stays unused, and reading (3) shows what that code costs.
 * These in-process readings run under tsx: its loader's transforms and source maps of the
 * modules loaded after the baseline (gpt-tokenizer's) count too, about 0.5 MB.
 *
 * The figure comes from processes of their own (test/fixtures/memory/heap-after-shutdown.mjs,
 * the test's): plain Node, the built package, the baseline right after importing its entry point
 * (dist/index.js); read right after shutdown and after {@link AGED_GCS} major collections, for
 * sessions that are not compacted (128k window) and for sessions grown through compactions at
 * a 16k window (cleared and summarized: the summarizer's and the cascade's code ran too).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GCProfiler, getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CompactManager, MemorySessionStore } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { ensureBuilt, ROOT } from '../test/support/ensure-built.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MB = 1024 * 1024;
/**
 * Major collections the heap starts itself after shutdown: V8 flushes a function's bytecode
 * once its age reaches `--bytecode-old-age` (5), one more to flush it, two of margin.
 */
export const AGED_GCS = 8;

function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** V8's compiled code and bytecode with their metadata: what the functions that ran keep. */
function compiledCode(): { machine: number; bytecode: number } {
  const code = getHeapCodeStatistics();
  return { machine: code.code_and_metadata_size, bytecode: code.bytecode_and_metadata_size };
}

/**
 * Runs until `count` major collections the heap started itself (not `gc()`) have run: arrays
 * kept long enough to be promoted, then dropped. Nothing of it stays once it returns.
 */
function naturalMajorGcs(count: number): void {
  let seen = 0;
  while (seen < count) {
    const profiler = new GCProfiler();
    profiler.start();
    let kept: number[][] = [];
    for (let i = 0; i < 200_000; i++) {
      kept.push(new Array(16).fill(i));
      if (kept.length > 50_000) kept = [];
    }
    kept = [];
    seen += profiler.stop().statistics.filter((entry) => entry.gcType === 'MarkSweepCompact').length;
  }
}

/** One reading after shutdown, over the baseline. */
export interface ShutdownReading {
  heap: number;
  /** Machine code (Sparkplug, TurboFan, regular expressions) over the baseline's. */
  machineCode: number;
  /** Bytecode and its metadata over the baseline's. */
  bytecode: number;
}

export interface MemoryRow {
  sessions: number;
  /** Heap over the baseline while every session is held. */
  held: number;
  /** After `endSession` on half of them: heap over the baseline and parses still cached. */
  afterEnd: number;
  cachedAfterEnd: number;
  /** Sessions still indexed after it (the caps drop the least recently used). */
  indexedAfterEnd: number;
  /** After `endSession` on every session: heap over the baseline and parses still cached. */
  afterEndAll: number;
  cachedAfterEndAll: number;
  /** After `shutdown()`, over the heap of the process before it made the manager (the manager still referenced): right after it (forced collections). */
  afterShutdown: ShutdownReading;
  /** After {@link AGED_GCS} major collections the heap started itself. */
  afterAgedGcs: ShutdownReading;
  /** After as many more with `--flush-baseline-code` (off by default in Node 20). */
  afterBaselineFlush: ShutdownReading;
}

/** A process of its own, after shutdown, over its heap right after importing the built package. */
export interface FreshProcessRow {
  label: string;
  /** Right after shutdown (forced full collections): heap, and its compiled code and bytecode. */
  after: number;
  afterCode: number;
  /** After {@link AGED_GCS} major collections the heap started itself. */
  aged: number;
  agedCode: number;
}

interface FixtureHeap {
  used: number;
  code: number;
}

/** Runs test/fixtures/memory/heap-after-shutdown.mjs (plain Node, dist/) with `args`. */
export async function freshProcessRow(label: string, args: string[]): Promise<FreshProcessRow> {
  ensureBuilt();
  const script = join(ROOT, 'test/fixtures/memory/heap-after-shutdown.mjs');
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', script, ...args, 'aged'], {
    cwd: ROOT,
    maxBuffer: MB,
  });
  const { fresh, after, afterAged } = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Record<
    'fresh' | 'after' | 'afterAged',
    FixtureHeap
  >;
  return {
    label,
    after: after.used - fresh.used,
    afterCode: after.code - fresh.code,
    aged: afterAged.used - fresh.used,
    agedCode: afterAged.code - fresh.code,
  };
}

/** The figure: 160 sessions not compacted (128k), 40 grown through compactions (16k). */
export async function freshProcessRows(): Promise<FreshProcessRow[]> {
  return [
    await freshProcessRow('160 sessions of 20 turns at 128k (none compacted)', ['160', '128000']),
    await freshProcessRow('40 sessions grown to 10/20/40 turns at 16k (cleared and summarized)', [
      '40',
      '16000',
      'grown',
    ]),
  ];
}

export function printFreshProcessRows(rows: readonly FreshProcessRow[]): void {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(2)} MB`;
  console.log(
    'After shutdown, in a process of its own (plain node, the built package; over the same process right after it imported dist/index.js; the manager still referenced):',
  );
  for (const row of rows)
    console.log(
      `  ${row.label}: ${mb(row.after)} right after (compiled code and bytecode ${mb(row.afterCode)}), ${mb(row.aged)} after ${AGED_GCS} major GCs (code ${mb(row.agedCode)}); target <= 2 MB: ${row.after <= 2 * MB ? 'met' : 'MISSED'}`,
    );
}

export async function memoryBench(sessions = 1_000): Promise<MemoryRow> {
  naturalMajorGcs(1); // the driver's own code, compiled before the baseline
  const fresh = heapAfterGc();
  const freshCode = compiledCode();
  const reading = (): ShutdownReading => {
    const heap = heapAfterGc() - fresh;
    const code = compiledCode();
    return {
      heap,
      machineCode: code.machine - freshCode.machine,
      bytecode: code.bytecode - freshCode.bytecode,
    };
  };
  const store = new MemorySessionStore();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000, store });
  await manager.ready();
  await manager.compact('warm-up', syntheticSession({ turns: 20, seed: 1 }));
  manager.endSession('warm-up');
  await store.delete('warm-up');
  await store.delete('warm-up::counts');
  const baseline = heapAfterGc();
  const ids = Array.from({ length: sessions }, (_, i) => `mem-${i}`);
  for (const [i, id] of ids.entries())
    await manager.compact(id, syntheticSession({ turns: 20, seed: i + 1 }));
  // The states and the token counts kept with them (`<id>::counts`).
  const forget = async () => {
    for (const id of ids) {
      await store.delete(id);
      await store.delete(`${id}::counts`);
    }
  };
  await forget();
  const held = heapAfterGc() - baseline;
  for (const id of ids.slice(0, sessions / 2)) manager.endSession(id);
  const status = manager.cacheStatus();
  const afterEnd = heapAfterGc() - baseline;
  for (const id of ids.slice(sessions / 2)) manager.endSession(id);
  const cachedAfterEndAll = manager.cacheStatus().cachedMessages;
  const afterEndAll = heapAfterGc() - baseline;
  await manager.shutdown();
  await forget();
  // A released encoding is held weakly: collectable once this job is over.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const afterShutdown = reading();
  naturalMajorGcs(AGED_GCS);
  const afterAgedGcs = reading();
  setFlagsFromString('--flush-baseline-code');
  naturalMajorGcs(AGED_GCS);
  const afterBaselineFlush = reading();
  setFlagsFromString('--no-flush-baseline-code');
  return {
    sessions,
    held,
    afterEnd,
    cachedAfterEnd: status.cachedMessages,
    indexedAfterEnd: status.sessions,
    afterEndAll,
    cachedAfterEndAll,
    afterShutdown,
    afterAgedGcs,
    afterBaselineFlush,
  };
}

export function printMemory(row: MemoryRow): void {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  const mb2 = (bytes: number) => `${(bytes / MB).toFixed(2)} MB`;
  console.log(
    `Memory over the baseline (heap after full GCs), ${row.sessions.toLocaleString('en')} sessions of 20 turns: held ${mb(row.held)}; after endSession on half ${mb(row.afterEnd)} (${row.cachedAfterEnd.toLocaleString('en')} parses still cached, ${row.indexedAfterEnd} sessions still indexed: the caps dropped the oldest); after endSession on all ${mb(row.afterEndAll)} (${row.cachedAfterEndAll.toLocaleString('en')} parses cached)`,
  );
  const line = (label: string, r: ShutdownReading) =>
    `  ${label}: ${mb2(r.heap)} (machine code ${mb2(r.machineCode)}, bytecode ${mb2(r.bytecode)}, the rest ${mb2(r.heap - r.machineCode - r.bytecode)}; target <= 2 MB: ${r.heap <= 2 * MB ? 'met' : 'MISSED'})`;
  console.log(
    'After shutdown, over this process before it made the manager (library imported, nothing of it run; the manager still referenced; under tsx, whose loader adds ~0.5 MB for modules loaded later):',
  );
  console.log(line('right after, forced full GCs', row.afterShutdown));
  console.log(
    line(`after ${AGED_GCS} major GCs the heap started (bytecode unused for 5 is flushed)`, row.afterAgedGcs),
  );
  console.log(
    line(`after ${AGED_GCS} more with --flush-baseline-code (off in Node 20)`, row.afterBaselineFlush),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv.find((a) => a.startsWith('--sessions='));
  printMemory(await memoryBench(arg ? Number(arg.split('=')[1]) : 1_000));
  printFreshProcessRows(await freshProcessRows());
}

/**
 * `npx tsx bench/memory.ts [--sessions=1000]` (also in `npm run bench`): what a long-lived
 * manager holds after serving many sessions, after `endSession` on half of them, and after
 * `shutdown()`, against the heap before it served any (issue 47 point 4). The heap is measured
 * after full collections; the rows while sessions are held count from after the tokenizer's
 * load, the row after shutdown from before the manager was made (the last manager's shutdown
 * releases the tokenizer). The stored states are deleted before each measure: the store stands for
 * one outside the process.
 */
import { getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CompactManager, MemorySessionStore } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MB = 1024 * 1024;

function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** V8's compiled code and bytecode with their metadata: what the functions that ran keep. */
function compiledCode(): number {
  const code = getHeapCodeStatistics();
  return code.code_and_metadata_size + code.bytecode_and_metadata_size;
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
  /** After `shutdown()`, over the heap of the process before it made the manager (the manager still referenced). */
  afterShutdown: number;
  /** The part of `afterShutdown` that is compiled code and bytecode of the functions that ran. */
  afterShutdownCode: number;
}

export async function memoryBench(sessions = 1_000): Promise<MemoryRow> {
  const fresh = heapAfterGc();
  const freshCode = compiledCode();
  const store = new MemorySessionStore();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000, store });
  await manager.ready();
  await manager.compact('warm-up', syntheticSession({ turns: 20, seed: 1 }));
  manager.endSession('warm-up');
  await store.delete('warm-up');
  const baseline = heapAfterGc();
  const ids = Array.from({ length: sessions }, (_, i) => `mem-${i}`);
  for (const [i, id] of ids.entries())
    await manager.compact(id, syntheticSession({ turns: 20, seed: i + 1 }));
  for (const id of ids) await store.delete(id);
  const held = heapAfterGc() - baseline;
  for (const id of ids.slice(0, sessions / 2)) manager.endSession(id);
  const status = manager.cacheStatus();
  const afterEnd = heapAfterGc() - baseline;
  for (const id of ids.slice(sessions / 2)) manager.endSession(id);
  const cachedAfterEndAll = manager.cacheStatus().cachedMessages;
  const afterEndAll = heapAfterGc() - baseline;
  await manager.shutdown();
  // A released encoding is held weakly: collectable once this job is over.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const afterShutdown = heapAfterGc() - fresh;
  const afterShutdownCode = compiledCode() - freshCode;
  return {
    sessions,
    held,
    afterEnd,
    cachedAfterEnd: status.cachedMessages,
    indexedAfterEnd: status.sessions,
    afterEndAll,
    cachedAfterEndAll,
    afterShutdown,
    afterShutdownCode,
  };
}

export function printMemory(row: MemoryRow): void {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  console.log(
    `Memory over the baseline (heap after full GCs), ${row.sessions.toLocaleString('en')} sessions of 20 turns: held ${mb(row.held)}; after endSession on half ${mb(row.afterEnd)} (${row.cachedAfterEnd.toLocaleString('en')} parses still cached, ${row.indexedAfterEnd} sessions still indexed: the caps dropped the oldest); after endSession on all ${mb(row.afterEndAll)} (${row.cachedAfterEndAll.toLocaleString('en')} parses cached); after shutdown ${mb(row.afterShutdown)} over the process before the manager, tokenizer included, ${mb(row.afterShutdownCode)} of it compiled code and bytecode of the functions that ran (target <= 2 MB: ${row.afterShutdown <= 2 * MB ? 'met' : 'MISSED'})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = process.argv.find((a) => a.startsWith('--sessions='));
  printMemory(await memoryBench(arg ? Number(arg.split('=')[1]) : 1_000));
}

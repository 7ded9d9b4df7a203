/**
 * `npx tsx bench/cold-start.ts [--quick]` (also in `npm run bench`): the first call of a fresh
 * manager (what a new process pays: a serverless request, a restarted worker) on a known
 * session, against a warm call (issue 47 point 1). The session's state and token counts are in
 * the store (`<session>::quick` and `<session>::counts`, written after the calls that grew the
 * history); the fresh manager gets the history as a JSON round trip, as read from a database
 * (median of 5 fresh managers in turn; the longest block is the longest of theirs). Beside it, the same
 * first call with the counts record deleted and on a session the store does not know (from
 * 1,000 messages both decide from a bound and count exactly after the call: the call's time
 * is the call's, the longest block also covers the work after it). CPU times are the
 * process's (GC helper threads included), steadier than wall time on a busy machine.
 *
 * The last row is a session that compacted (its request the summary and the kept tail): a
 * fresh manager's first call against a warm call, and with its quick record deleted (the full
 * path: the whole history indexed and matched, as before the compacted quick record).
 *
 * The tokenizer is loaded already (`ready()`): its load is the same for every row.
 */
import { CompactManager, MemorySessionStore } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;
const ms = (value: number) => `${value < 10 ? value.toFixed(3) : value.toFixed(1)} ms`;

/** A coding session of about `count` messages (~340 tokens each), ending on a user message. */
function sessionOf(count: number): unknown[] {
  const messages: unknown[] = [];
  for (let part = 0; messages.length < count; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 3 + part, toolDensity: 3, resultChars: 3_300 });
    messages.push(
      ...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')),
    );
  }
  let end = count;
  while (end > 1 && (messages[end] as { role?: string }).role !== 'user') end--;
  return messages.slice(0, end);
}

const options = { model: 'gpt-4o', maxContextTokens: 2_000_000_000 } as const;
let asked = 0;
const ask = () => ({ role: 'user', content: `follow-up ${asked++}: run the tests again` });

export interface ColdStartRow {
  messages: number;
  /** Median warm call (same objects, one message appended, a loop turn between calls). */
  warm: number;
  /** Its CPU time (the process's: a figure less sensitive than wall time to a busy machine). */
  warmCpu: number;
  /** CPU time of the known and unknown first calls. */
  knownCpu: number;
  unknownCpu: number;
  /** First call of a fresh manager on the known session, its counts stored. */
  known: number;
  /** Its longest block of the event loop. */
  knownBlock: { wall: number; cpu: number };
  /** The same with the quick and counts records deleted (before issue 47). */
  recount: number;
  /** First call on a history the store does not know, and its longest block. */
  unknown: number;
  unknownBlock: { wall: number; cpu: number };
}

/**
 * Longest gap between two turns of the event loop during the last {@link freshCall}, per
 * session: wall time, and the process's CPU time in it (the wall gap also counts time the OS
 * gave other processes on a busy machine; the CPU time also counts GC helper threads).
 */
export const longestBlocks = new Map<string, { wall: number; cpu: number }>();

async function freshCall(
  store: MemorySessionStore,
  session: string,
  history: unknown[],
  maxContextTokens: number = options.maxContextTokens,
): Promise<number> {
  const manager = new CompactManager({ ...options, maxContextTokens, store });
  await manager.ready();
  const copy = JSON.parse(JSON.stringify(history)) as unknown[];
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let block = 0;
  let cpu = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    const used = process.cpuUsage(lastCpu);
    block = Math.max(block, now - last);
    cpu = Math.max(cpu, (used.user + used.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t = performance.now();
  const cpuBefore = process.cpuUsage();
  last = t;
  await manager.compact(session, copy);
  const took = performance.now() - t;
  const used = process.cpuUsage(cpuBefore);
  callCpu.set(session, (used.user + used.system) / 1000);
  // The work the call left for after it (the exact count of a call decided from a bound) is
  // not the call's time, but its blocks are the process's.
  await manager.flush();
  running = false;
  longestBlocks.set(session, { wall: Math.max(block, performance.now() - last), cpu });
  await manager.shutdown();
  return took;
}

/** The process's CPU time (main thread and GC helpers) in the last {@link freshCall}, per session. */
export const callCpu = new Map<string, number>();

export async function coldStartAt(size: number): Promise<ColdStartRow> {
  const store = new MemorySessionStore();
  const history = sessionOf(size);
  const manager = new CompactManager({ ...options, store });
  await manager.ready();
  await manager.compact('s', history);
  await manager.flush();
  const warm: number[] = [];
  const warmCpu: number[] = [];
  for (let i = 0; i < 30; i++) {
    history.push(ask());
    const t = performance.now();
    const cpuBefore = process.cpuUsage();
    await manager.compact('s', history);
    warm.push(performance.now() - t);
    const used = process.cpuUsage(cpuBefore);
    warmCpu.push((used.user + used.system) / 1000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Waits for the counts written after the calls.
  await manager.shutdown();
  history.push(ask());
  // A few fresh managers in turn (each a new process's first call), the median taken: one
  // call's wall time on a busy machine is mostly the scheduler's.
  const knowns: number[] = [];
  const knownCpus: number[] = [];
  let knownBlock = { wall: 0, cpu: 0 };
  for (let i = 0; i < 5; i++) {
    knowns.push(await freshCall(store, 's', history));
    knownCpus.push(callCpu.get('s')!);
    const block = longestBlocks.get('s')!;
    if (block.wall > knownBlock.wall) knownBlock = block;
  }
  const known = median(knowns);
  const knownCpu = median(knownCpus);
  // Without the records a warm manager leaves (quick-resume.ts and the counts by hash).
  await store.delete('s::counts');
  await store.delete('s::quick');
  const recount = await freshCall(store, 's', history);
  const unknown = await freshCall(store, 'other', history);
  return {
    messages: history.length,
    warm: median(warm),
    warmCpu: median(warmCpu),
    known,
    knownCpu,
    knownBlock,
    recount,
    unknown,
    unknownCpu: callCpu.get('other')!,
    unknownBlock: longestBlocks.get('other')!,
  };
}

/** The compacted row: a session whose older part a summary covers (issue 47 point 1). */
export interface CompactedColdRow {
  messages: number;
  /** Messages of the request a warm call sends (the summary and the kept tail). */
  sent: number;
  warm: number;
  warmCpu: number;
  /** First call of a fresh manager, the session's records stored (median of 7), and its CPU time. */
  known: number;
  knownCpu: number;
  knownBlock: { wall: number; cpu: number };
  /** The same with the quick record deleted: the full path (before the compacted quick record). */
  recount: number;
}

/**
 * A fresh manager's first call on a known session that compacted, against a warm call, in one
 * run: a window the history is well over, so the first call summarizes; the next ones only
 * append.
 */
export async function coldCompactedAt(size: number): Promise<CompactedColdRow> {
  const store = new MemorySessionStore();
  const history = sessionOf(size);
  const window = { ...options, maxContextTokens: 400_000 };
  const manager = new CompactManager({ ...window, store });
  await manager.ready();
  if (!(await manager.compact('c', history)).applied) throw new Error('the compacted row did not compact');
  await manager.flush();
  const warm: number[] = [];
  const warmCpu: number[] = [];
  let sent = 0;
  for (let i = 0; i < 30; i++) {
    history.push(ask());
    const t = performance.now();
    const cpuBefore = process.cpuUsage();
    const result = await manager.compact('c', history);
    warm.push(performance.now() - t);
    const used = process.cpuUsage(cpuBefore);
    warmCpu.push((used.user + used.system) / 1000);
    if (result.applied) throw new Error('the compacted row compacted again');
    sent = result.messages.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.shutdown();
  history.push(ask());
  const knowns: number[] = [];
  const knownCpus: number[] = [];
  let knownBlock = { wall: 0, cpu: 0 };
  for (let i = 0; i < 7; i++) {
    knowns.push(await freshCall(store, 'c', history, window.maxContextTokens));
    knownCpus.push(callCpu.get('c')!);
    const block = longestBlocks.get('c')!;
    if (block.wall > knownBlock.wall) knownBlock = block;
  }
  await store.delete('c::quick');
  const recount = await freshCall(store, 'c', history, window.maxContextTokens);
  return {
    messages: history.length,
    sent,
    warm: median(warm),
    warmCpu: median(warmCpu),
    known: median(knowns),
    knownCpu: median(knownCpus),
    knownBlock,
    recount,
  };
}

export function printCompactedColdStart(rows: readonly CompactedColdRow[]): void {
  for (const row of rows) {
    const ratio = row.known / row.warm;
    const cpuRatio = row.knownCpu / row.warmCpu;
    console.log(
      `  known compacted ${row.messages.toLocaleString('en')} (request of ${row.sent.toLocaleString('en')} messages): warm ${ms(row.warm)} (CPU ${ms(row.warmCpu)}); fresh ${ms(row.known)} (CPU ${ms(row.knownCpu)}; ${ratio.toFixed(1)}x warm, CPU ${cpuRatio.toFixed(1)}x, target <= 10x: ${ratio <= 10 ? 'met' : 'MISSED'}; longest block ${ms(row.knownBlock.wall)}, CPU ${ms(row.knownBlock.cpu)}); quick record deleted (the full path) ${ms(row.recount)} (${(row.recount / row.warm).toFixed(0)}x warm)`,
    );
  }
}

export function printColdStart(rows: readonly ColdStartRow[]): void {
  console.log(
    'First call of a fresh manager (a new process) against a warm call (history from JSON, tokenizer loaded):',
  );
  for (const row of rows) {
    const ratio = row.known / row.warm;
    console.log(
      `  ${row.messages.toLocaleString('en').padStart(7)} messages: warm ${ms(row.warm)} (CPU ${ms(row.warmCpu)}); known session ${ms(row.known)} (CPU ${ms(row.knownCpu)}; ${ratio.toFixed(0)}x warm, CPU ${(row.knownCpu / row.warmCpu).toFixed(0)}x, target <= 10x: ${ratio <= 10 ? 'met' : 'MISSED'}; longest block ${ms(row.knownBlock.wall)}, CPU ${ms(row.knownBlock.cpu)}); counts not stored ${ms(row.recount)}; unknown session ${ms(row.unknown)} (CPU ${ms(row.unknownCpu)}; longest block ${ms(row.unknownBlock.wall)}, CPU ${ms(row.unknownBlock.cpu)})`,
    );
  }
}

export async function coldStartBench(quick = false): Promise<ColdStartRow[]> {
  const rows: ColdStartRow[] = [];
  for (const size of quick ? [1_000] : [1_000, 16_000]) rows.push(await coldStartAt(size));
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  printColdStart(await coldStartBench(quick));
  printCompactedColdStart([await coldCompactedAt(quick ? 1_000 : 16_000)]);
}

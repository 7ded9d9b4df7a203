/**
 * How long a piece of work held the event loop (issue 47 point 2): the longest block, read by
 * three monitors at once while the work runs.
 *
 * - A turn sampler: `setImmediate` ticks; each gap between two ticks is a stretch the loop was
 *   held. Per gap, the wall time and the main thread's own CPU time in it (Linux
 *   `/proc/self/task/<pid>/schedstat`, nanoseconds on the CPU; the process's CPU time where it
 *   is missing, GC helper threads included). On a loaded machine a gap's wall time counts the
 *   OS running other processes; the thread's CPU time is what the work itself held.
 * - `monitorEventLoopDelay` (1 ms resolution): its largest delay.
 * - `PerformanceObserver` 'gc' entries: the longest pause and its kind (scavenge, mark-compact).
 *
 * Two verdicts against {@link BLOCK_TARGET_MS}: the work's block (the most main-thread CPU in
 * one gap; a GC pause in the gap counts as far as the main thread works in it) and the longest
 * GC pause (wall clock: on a loaded machine a parallel scavenge waits for helper threads the OS
 * has descheduled, so compare with the idle row).
 */
import { openSync, readSync } from 'node:fs';
import {
  constants,
  monitorEventLoopDelay,
  type PerformanceEntry,
  PerformanceObserver,
} from 'node:perf_hooks';

/** No synchronous stretch over this (issue 47 point 2). */
export const BLOCK_TARGET_MS = 20;

/** What one path held the loop for. */
export interface Blocks {
  path: string;
  /** The longest gap between two turns of the loop (wall clock). */
  wallMs: number;
  /** The most CPU time the main thread used in one gap (what the work itself held). */
  threadMs: number;
  /** Whether {@link threadMs} is the main thread's own (schedstat) or the process's (all threads). */
  threadOnly: boolean;
  /**
   * The most main-thread CPU in one gap with no GC pause in it: the longest stretch of the
   * work's own code (a gap with a scavenge in it counts the collector's share, whose length
   * the young generation's survivors set, not the work's slicing).
   */
  workMs: number;
  /**
   * The most main-thread CPU in one gap less the GC pauses in that gap (wall clock), over every
   * gap: a lower bound of the work's own longest stretch (a pause's wall time counts helper
   * threads' waits the main thread spent off the CPU too), where {@link threadMs} is the upper.
   */
  netMs: number;
  /** The longest GC pause and its kind. */
  gcMs: number;
  gcKind: string;
  /** `monitorEventLoopDelay`'s largest delay. */
  delayMaxMs: number;
  turns: number;
  /** The gap of {@link threadMs} (`performance.now()` at its start and end), for a profile. */
  worstGap?: [number, number];
  /** Every gap of more than {@link BLOCK_TARGET_MS} of CPU (start, end, CPU ms), for a profile of each. */
  longGaps?: [number, number, number][];
}

/** The block of a row: the most main-thread CPU time in one gap. */
export const blockOf = (row: Blocks) => row.threadMs;

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const buffer = Buffer.alloc(128);
let fd: number | undefined;
try {
  fd = openSync(schedstat, 'r');
} catch {
  fd = undefined;
}

/** The main thread's CPU time in ms (schedstat), or the process's (`process.cpuUsage`). */
function threadCpuMs(): number {
  if (fd !== undefined) {
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString('latin1', 0, read);
    return Number(text.slice(0, text.indexOf(' '))) / 1e6;
  }
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/**
 * Runs `work` under the three monitors; `path` names the row. Ends after `work` resolves and
 * one more turn of the loop (GC entries are delivered in a later turn).
 */
export async function watchBlocks(path: string, work: () => Promise<unknown>): Promise<Blocks> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let gcMs = 0;
  let gcKind = 'none';
  const started = performance.now();
  /** Every GC pause of the window (start, end) and every gap (start, end, CPU), for `workMs`. */
  const pauses: number[] = [];
  const gaps: number[] = [];
  // Entries are delivered in a later turn: one of a collection before the window may come in it.
  const onEntries = (entries: readonly PerformanceEntry[]) => {
    for (const entry of entries) {
      if (entry.startTime < started) continue;
      pauses.push(entry.startTime, entry.startTime + entry.duration);
      if (entry.duration > gcMs) {
        gcMs = entry.duration;
        const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
        gcKind = (kind !== undefined && GC_KINDS[kind]) || 'gc';
      }
    }
  };
  const observer = new PerformanceObserver((list) => onEntries(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  let wallMs = 0;
  let threadMs = 0;
  let worstGap: [number, number] | undefined;
  let turns = 0;
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let done = false;
  const gap = () => {
    const now = performance.now();
    const cpu = threadCpuMs();
    wallMs = Math.max(wallMs, now - last);
    if (cpu - lastCpu > threadMs) {
      threadMs = cpu - lastCpu;
      worstGap = [last, now];
    }
    // Gaps under a millisecond of CPU cannot be the longest stretch: not kept.
    if (cpu - lastCpu >= 1) gaps.push(last, now, cpu - lastCpu);
    // The clocks are read again: the read itself is not the work's.
    last = performance.now();
    lastCpu = threadCpuMs();
  };
  const tick = () => {
    if (done) return;
    gap();
    turns++;
    setImmediate(tick);
  };
  delay.enable();
  setImmediate(tick);
  try {
    await work();
  } finally {
    gap();
    done = true;
    delay.disable();
    await new Promise((resolve) => setImmediate(resolve));
    onEntries(observer.takeRecords());
    observer.disconnect();
  }
  return {
    path,
    wallMs,
    threadMs,
    ...longestWork(gaps, pauses),
    threadOnly: fd !== undefined,
    gcMs,
    gcKind,
    delayMaxMs: delay.max / 1e6,
    turns,
    ...(worstGap ? { worstGap } : {}),
    longGaps: longGapsOf(gaps),
  };
}

/** The gaps (triples start, end, CPU) of more than the target. */
function longGapsOf(gaps: readonly number[]): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (let g = 0; g < gaps.length; g += 3)
    if (gaps[g + 2]! > BLOCK_TARGET_MS) out.push([gaps[g]!, gaps[g + 1]!, gaps[g + 2]!]);
  return out;
}

/**
 * Over gaps (triples start, end, CPU) and GC pauses (pairs start, end): the most CPU of a gap
 * no pause overlaps (`workMs`), and the most CPU of any gap less the pause time inside it (`netMs`).
 */
function longestWork(gaps: readonly number[], pauses: readonly number[]): { workMs: number; netMs: number } {
  let workMs = 0;
  let netMs = 0;
  for (let g = 0; g < gaps.length; g += 3) {
    const [start, end, cpu] = [gaps[g]!, gaps[g + 1]!, gaps[g + 2]!];
    let collected = 0;
    for (let p = 0; p < pauses.length; p += 2)
      collected += Math.max(0, Math.min(end, pauses[p + 1]!) - Math.max(start, pauses[p]!));
    if (collected === 0) workMs = Math.max(workMs, cpu);
    netMs = Math.max(netMs, cpu - collected);
  }
  return { workMs, netMs };
}

/** The run whose block is the median of `runs` (the other figures are that run's). */
export function medianRun(runs: readonly Blocks[]): Blocks {
  const sorted = [...runs].sort((a, b) => blockOf(a) - blockOf(b));
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** One line per path: the block with met/MISSED, then what each monitor saw. */
export function printBlocks(title: string, rows: readonly Blocks[]): boolean {
  console.log(title);
  const threadOnly = rows.every((row) => row.threadOnly);
  console.log(
    `  block = the most ${threadOnly ? 'main-thread CPU (schedstat)' : 'process CPU (all threads)'} between two turns of the loop; work = the same over gaps with no GC pause in them; net = the most CPU of a gap less its GC pauses (a lower bound of the work's own); GC = the longest pause (wall clock, 'gc' entries); targets <= ${BLOCK_TARGET_MS} ms each`,
  );
  let met = true;
  let workMet = true;
  let gcMet = true;
  const verdict = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
  for (const row of rows) {
    const ok = blockOf(row) <= BLOCK_TARGET_MS;
    const gcOk = row.gcMs <= BLOCK_TARGET_MS;
    if (!row.path.startsWith('idle')) {
      met &&= ok;
      workMet &&= row.workMs <= BLOCK_TARGET_MS;
      gcMet &&= gcOk;
    }
    console.log(
      `  ${row.path.padEnd(90)} block ${blockOf(row).toFixed(1).padStart(5)} ms ${verdict(ok)} work ${row.workMs.toFixed(1).padStart(5)} ms ${verdict(row.workMs <= BLOCK_TARGET_MS)} net >= ${row.netMs.toFixed(1).padStart(5)} ms GC ${row.gcMs.toFixed(1).padStart(5)} ms ${verdict(gcOk)} (${row.gcKind}; wall gap ${row.wallMs.toFixed(1).padStart(6)} ms; delay max ${row.delayMaxMs.toFixed(1).padStart(6)} ms; ${row.turns} turns)`,
    );
  }
  console.log(
    `  every path's longest block <= ${BLOCK_TARGET_MS} ms: ${met ? 'met' : 'MISSED'}; longest work without GC: ${workMet ? 'met' : 'MISSED'}; every GC pause <= ${BLOCK_TARGET_MS} ms: ${gcMet ? 'met' : 'MISSED'}`,
  );
  return met && gcMet;
}

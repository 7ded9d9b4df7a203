/**
 * The store's time limits count idle time only: what a call waits on the store, not what this
 * process spends busy meanwhile.
 */

import type { EventLoopUtilization } from 'node:perf_hooks';
import { clock } from '../clock.js';

/** What one manager call may still wait on the store, and whether the store failed it. */
export interface CallBudget {
  leftMs: number;
  affected: boolean;
}

/**
 * A time limit that counts only the time the event loop sat idle: waiting on the store. A
 * loop busy with this process's own work (a cold module load, a tokenizer's rank tables,
 * other sessions) cannot answer the store anyway, and is not the store's fault: the limit is
 * pushed back by it, so a warming process sees no false timeout. Rejects once `ms` of idle
 * time has passed, one turn of the loop later (an answer already read settles first).
 *
 * Nothing is read or armed before the turn ends: until an immediate set now has run, the loop
 * cannot sit idle (a pending immediate keeps its poll phase from blocking), so no idle time is
 * missed. A store that answers within the turn (an in-process one, a cache) is then waited on
 * with one immediate, cancelled: no timer, and no reading of the loop's idle time, which loads
 * Node's `perf_hooks` modules on first use (about 70 KB of heap kept for the process's life).
 */
export function idleTimeLimit(ms: number): {
  promise: Promise<never>;
  cancel: () => void;
  waitedMs: () => number;
} {
  let start: EventLoopUtilization | undefined;
  let startedAt = 0;
  // Before the loop is measured (a runtime that does not), count the wall time.
  const waitedMs = () => {
    if (start === undefined) return 0;
    const idle = performance.eventLoopUtilization(start).idle;
    return start.idle === 0 && start.active === 0 ? clock.now() - startedAt : idle;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate: ReturnType<typeof setImmediate> | undefined;
  const promise = new Promise<never>((_, reject) => {
    const check = () => {
      const left = ms - waitedMs();
      if (left > 0.5) timer = setTimeout(check, left);
      else immediate = setImmediate(() => reject(new Error(`no answer within ${ms} ms`)));
    };
    immediate = setImmediate(() => {
      immediate = undefined;
      start = performance.eventLoopUtilization();
      startedAt = clock.now();
      timer = setTimeout(check, ms);
    });
  });
  return {
    promise,
    cancel: () => {
      clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
    },
    waitedMs,
  };
}

/** Waits for `promise` at most what `budget` has left (and spends it). */
export async function waitWithin(
  promise: Promise<unknown> | undefined,
  budget: CallBudget | undefined,
): Promise<void> {
  if (!promise) return;
  if (!budget) {
    await promise;
    return;
  }
  const limit = idleTimeLimit(Math.max(0, budget.leftMs));
  try {
    await Promise.race([promise, limit.promise]);
  } catch {
    // Out of budget (or the flush failed): the call goes on.
  } finally {
    limit.cancel();
    budget.leftMs -= limit.waitedMs();
  }
}

/**
 * How many preparations of the sessions' last version any schedule had to start before the
 * sessions closed (bench/queue.ts): an estimate from the run itself. Each session's next
 * trigger is projected one cycle (its last two compactions apart) after its last compaction;
 * the workers' slots, each taking a run's median time, fit the jobs that start after the close
 * and still finish by their trigger (earliest trigger first, which fits the most jobs of equal
 * length); the rest had to start before the close, where a session that closes then has its
 * job already spent. No scheduler, however late it starts jobs, spends fewer while every job
 * is ready at its trigger.
 */
import type { QueueWorkerReport } from '../test/queue/support/queue-worker.js';

/** The estimate, and what it is made of. */
export interface LastVersionFloor {
  /** Sessions whose projected next trigger comes after the close. */
  readonly sessions: number;
  /** Jobs the workers run at once. */
  readonly slots: number;
  /** Median time of a run, summarizer start to outcome (ms). */
  readonly runMs: number;
  /** The projected next triggers, earliest and latest, after the close (ms). */
  readonly triggersAfterCloseMs: readonly [number, number];
  /** Last-version jobs that had to start before the close. */
  readonly floor: number;
}

interface Done {
  readonly session: string;
  readonly step: number;
  readonly applied: boolean;
  readonly at?: number;
}

/** The estimate for one run; `undefined` when the run does not tell (no cycle, no run timed). */
export function lastVersionFloor(
  done: readonly Done[],
  workerReports: readonly (readonly (QueueWorkerReport & { at?: number })[])[],
  slots: number,
  steps: number,
): LastVersionFloor | undefined {
  const close = Math.max(...done.filter((r) => r.step === steps).map((r) => r.at ?? 0));
  const compactions = new Map<string, number[]>();
  for (const r of done)
    if (r.applied && r.at !== undefined)
      compactions.set(r.session, [...(compactions.get(r.session) ?? []), r.at]);
  const triggers: number[] = [];
  for (const times of compactions.values()) {
    const [previous, last] = times.sort((a, b) => a - b).slice(-2);
    if (previous === undefined || last === undefined) continue;
    const next = 2 * last - previous;
    if (next > close) triggers.push(next);
  }
  const runs = workerReports.flatMap(runTimes).sort((a, b) => a - b);
  const runMs = runs[Math.floor(runs.length / 2)];
  if (triggers.length === 0 || runMs === undefined || slots < 1) return undefined;
  triggers.sort((a, b) => a - b);
  const free = Array.from({ length: slots }, () => close);
  let fitted = 0;
  for (const trigger of triggers) {
    const slot = free.indexOf(Math.min(...free));
    if (free[slot]! + runMs > trigger) continue;
    free[slot]! += runMs;
    fitted++;
  }
  return {
    sessions: triggers.length,
    slots,
    runMs,
    triggersAfterCloseMs: [triggers[0]! - close, triggers.at(-1)! - close],
    floor: triggers.length - fitted,
  };
}

/** A worker's run times: from each summarizer start to that session's next outcome. */
function runTimes(reports: readonly (QueueWorkerReport & { at?: number })[]): number[] {
  const started = new Map<string, number>();
  const times: number[] = [];
  for (const r of reports) {
    if (r.at === undefined) continue;
    if (r.type === 'summarizing') started.set(r.sessionId, r.at);
    if (r.type !== 'job' || !r.outcome.summarized) continue;
    const start = started.get(r.outcome.sessionId);
    started.delete(r.outcome.sessionId);
    if (start !== undefined) times.push(r.at - start);
  }
  return times;
}

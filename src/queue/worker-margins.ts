/**
 * The margins a worker plans held jobs with, from its recent runs (run-times.ts) and how far
 * due times came earlier while jobs ran (due-drift.ts); shown in the worker's `status()`.
 */

import type { DueDrift } from './due-drift.js';
import type { RunPlan } from './fleet-schedule.js';
import type { PreparationWorkerStatus } from './preparation-worker-options.js';
import type { RunTimes } from './run-times.js';

/** A held job's plan from the worker's recent runs and due-time drift; `undefined` before a run. */
export function runPlan(runTimes: RunTimes, drift: DueDrift): RunPlan | undefined {
  const runMs = runTimes.median();
  const spread = runTimes.spread();
  if (runMs === undefined || spread === undefined) return undefined;
  // The runs' own spread (p90 over the median, at least MIN_RUN_SPREAD_MS): a full median run
  // as margin started the keep-up case's jobs so early that a session closing 1-2 s before
  // its next trigger had its last version summarized already (bench/queue.ts, issue 46).
  return { runMs, spreadMs: spread, driftShare: drift.share() };
}

/** A copy of `status` with the margins the worker plans held jobs with now. */
export function withMargins(
  status: PreparationWorkerStatus,
  runTimes: RunTimes,
  drift: DueDrift,
): PreparationWorkerStatus {
  const plan = runPlan(runTimes, drift);
  const p90 = runTimes.quantile(0.9);
  if (!plan || p90 === undefined) return { ...status };
  return {
    ...status,
    margins: {
      runMedianMs: plan.runMs,
      runP90Ms: p90,
      runMarginMs: plan.spreadMs,
      dueDriftShare: plan.driftShare,
      dueDriftSamples: drift.samples,
    },
  };
}

/**
 * Where a bench/queue.ts run's worker summarizer calls that were not used went, each call
 * (a `summarizing` report, paired with its worker's next outcome for that session) placed
 * against its session's close (`endSession(id, { closed: true })`): a last version (the
 * session's final one, never reached) published before the close, or in flight at the close
 * (published after it, or cancelled by the withdrawal: its call aborted), or started after the
 * close; a call for an earlier version that came too late (superseded after the summarizer),
 * a duplicate, a failure (retried) or no outcome (its worker killed). `completed` counts the
 * calls that ran to an answer (cancelled ones did not); `started` every call.
 */
import type { QueueWorkerReport } from '../test/queue/support/queue-worker.js';

/** The breakdown of one run. */
export interface QueueWaste {
  /** Summarizer calls started. */
  readonly started: number;
  /** Calls that ran to an answer (not cancelled). */
  readonly completed: number;
  /** Published and used (or published for an earlier version: used at a trigger). */
  readonly used: number;
  /** Last version published before the close. */
  readonly lastBeforeClose: number;
  /** Last version in flight at the close and published after it. */
  readonly lastInFlightPublished: number;
  /** Calls in flight at the close, cancelled by the withdrawal (aborted; not completed). */
  readonly cancelledAtClose: number;
  /** Calls cancelled before the close (the session moved past their version). */
  readonly cancelledBefore: number;
  /** Calls started after their session closed. */
  readonly afterClose: number;
  /**
   * Each call started after its session closed: how long after the close it started (ms), its
   * job's version against the session's final one, and how its run ended (`cancelled`: the
   * withdrawal reached it after the call started; else the withdrawal missed the job).
   */
  readonly afterCloseCalls: readonly string[];
  /** Earlier versions: superseded after the summarizer (late), duplicates, failures (retried). */
  readonly late: number;
  readonly duplicate: number;
  readonly failed: number;
  /** Calls with no outcome (their worker was killed). */
  readonly noOutcome: number;
  /** Picks dropped without a summarizer call (withdrawn while held, superseded, already prepared, expired). */
  readonly droppedUnsummarized: number;
}

type Stamped = QueueWorkerReport & { at?: number };

/**
 * The breakdown from the workers' reports, each session's final version (`versions`) and
 * close time (`closedAt`, epoch ms).
 */
export function queueWaste(
  workerReports: readonly (readonly Stamped[])[],
  versions: ReadonlyMap<string, number>,
  closedAt: ReadonlyMap<string, number>,
): QueueWaste {
  const w = {
    started: 0,
    completed: 0,
    used: 0,
    lastBeforeClose: 0,
    lastInFlightPublished: 0,
    cancelledAtClose: 0,
    cancelledBefore: 0,
    afterClose: 0,
    late: 0,
    duplicate: 0,
    failed: 0,
    noOutcome: 0,
    droppedUnsummarized: 0,
    afterCloseCalls: [] as string[],
  };
  for (const reports of workerReports) {
    const startedAt = new Map<string, number>();
    for (const r of reports) {
      if (r.type === 'summarizing') {
        w.started++;
        startedAt.set(r.sessionId, r.at ?? 0);
        continue;
      }
      if (r.type !== 'job') continue;
      const { outcome } = r;
      if (!outcome.summarized) {
        if (outcome.result !== 'published' && outcome.result !== 'failed') w.droppedUnsummarized++;
        continue;
      }
      const start = startedAt.get(outcome.sessionId) ?? 0;
      startedAt.delete(outcome.sessionId);
      const close = closedAt.get(outcome.sessionId) ?? Number.POSITIVE_INFINITY;
      const end = r.at ?? 0;
      if (!outcome.cancelled) w.completed++;
      if (start > close) {
        w.afterClose++;
        const final = versions.get(outcome.sessionId) ?? 0;
        w.afterCloseCalls.push(
          `${outcome.sessionId} v${outcome.baseVersion}/v${final} +${start - close} ms ${outcome.cancelled ? 'cancelled' : outcome.result}`,
        );
      } else if (outcome.cancelled) {
        if (end >= close) w.cancelledAtClose++;
        else w.cancelledBefore++;
      } else if (outcome.result === 'published') {
        const last = outcome.baseVersion >= (versions.get(outcome.sessionId) ?? 0);
        if (!last) w.used++;
        else if (end < close) w.lastBeforeClose++;
        else w.lastInFlightPublished++;
      } else if (outcome.result === 'superseded') w.late++;
      else if (outcome.result === 'already_prepared') w.duplicate++;
      else if (outcome.result === 'failed') w.failed++;
    }
    w.noOutcome += startedAt.size;
  }
  return w;
}

/** One line of the breakdown. */
export function wasteLine(w: QueueWaste, used: number): string {
  return `calls started ${w.started} (${(w.started / Math.max(1, used)).toFixed(3)} per version used), completed ${w.completed} (${(w.completed / Math.max(1, used)).toFixed(3)}); not used: last version published before the close ${w.lastBeforeClose}, in flight at the close and published ${w.lastInFlightPublished}, in flight at the close and cancelled ${w.cancelledAtClose}, cancelled before the close ${w.cancelledBefore}, started after the close ${w.afterClose}${w.afterCloseCalls.length > 0 ? ` (${w.afterCloseCalls.join(', ')})` : ''}, late ${w.late}, duplicate ${w.duplicate}, failed ${w.failed}, no outcome ${w.noOutcome}; picks dropped without a call ${w.droppedUnsummarized}`;
}

/**
 * How a preparation worker tells each job's outcome: `onJobDone` once the queue recorded the
 * run (completed, or failed with the attempt and whether it was the last), and the dead
 * letter's one warning of a job that failed every attempt.
 */

import type { Job, Worker } from 'bullmq';
import type { PreparationJobResult } from '../core/background/run-preparation-job.js';
import type { EventBus } from '../core/events/event-bus.js';
import type { PreparationJob } from '../core/queues/preparation-queue.js';
import type { Redactor } from '../core/redaction/redactor.js';
import { clip, deadLetter, errorTypeOf } from './dead-letter.js';
import type {
  PreparationJobOutcome,
  PreparationWorkerOptions,
  PreparationWorkerStatus,
} from './preparation-worker-options.js';

/** What a job's run returns to the queue. */
export type JobDone = { result: PreparationJobResult; attempt: number; cancelled?: boolean };

/** Tells each run's outcome once the queue recorded it; a last failed attempt is dead-lettered. */
export function tellOutcomes(
  worker: Worker<PreparationJob, JobDone>,
  tell: ReturnType<typeof outcomeTeller>,
  status: PreparationWorkerStatus,
  bus: EventBus,
  redact: Redactor | undefined,
): void {
  // A completed job is counted as completed when told.
  worker.on('completed', (job, done: JobDone) =>
    tell(job, done.result, done.attempt, undefined, false, done.cancelled),
  );
  worker.on('failed', (job, error) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1);
    tell(job, 'failed', job.attemptsMade, error, last);
    if (!last) return;
    status.deadLettered++;
    deadLetter(bus, job, error, redact);
  });
}

/** Tells `onJobDone` a job's outcome (a failing hook costs the hook only). */
export function outcomeTeller(
  options: PreparationWorkerOptions,
  redact: Redactor | undefined,
  summarizedRuns: Set<string>,
) {
  return (
    job: Job<PreparationJob>,
    result: PreparationJobOutcome['result'],
    attempt: number,
    error?: Error,
    last?: boolean,
    cancelled?: boolean,
  ) => {
    const summarized = summarizedRuns.delete(String(job.id));
    try {
      options.onJobDone?.({
        jobId: String(job.id),
        sessionId: job.data.sessionId,
        baseVersion: job.data.baseVersion,
        attempt,
        result,
        summarized,
        ...(error ? { errorType: errorTypeOf(error), error: clip(error.message, redact) } : {}),
        ...(last ? { deadLettered: true } : {}),
        ...(cancelled ? { cancelled: true } : {}),
      });
    } catch {
      // A failing hook costs the hook only.
    }
  };
}

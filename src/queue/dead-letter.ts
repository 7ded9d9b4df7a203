/** The worker's dead letters: the one warning of a job that failed every attempt, and how errors are told. */

import type { Job } from 'bullmq';
import { isCompactError } from '../core/errors.js';
import type { EventBus } from '../core/events/event-bus.js';
import { newOperation } from '../core/events/event-bus.js';
import type { PreparationJob } from '../core/queues/preparation-queue.js';
import { type Redactor, redactThenClip } from '../core/redaction/redactor.js';

/** The one event of a job that failed every attempt. */
export function deadLetter(
  bus: EventBus,
  job: Job<PreparationJob>,
  error: Error,
  redact: Redactor | undefined,
): void {
  const data = job.data;
  bus.emit(
    newOperation(data.sessionId),
    'compact.warning',
    {
      code: 'preparation_dead_lettered',
      message: `the summary preparation of version ${data.baseVersion + 1} failed ${job.attemptsMade} times and was dead-lettered; the agent compacts at its trigger as without a queue`,
      context: {
        jobId: job.id,
        queue: job.queueName,
        attempts: job.attemptsMade,
        version: data.baseVersion + 1,
        errorType: errorTypeOf(error),
        error: clip(error.message, redact),
      },
    },
    { start: Date.now() },
  );
}

/** The error's code: a `CompactError`'s, else `summarizer_failed` (a summarizer threw it). */
export function errorTypeOf(error: Error): string {
  return isCompactError(error) ? error.code : 'summarizer_failed';
}

/**
 * A message for a hook or an event: redacted, then cut to at most 500 characters (a secret cut
 * first no longer has the shape its rule knows; only its first 64 KiB are read).
 */
export function clip(message: string, redact: Redactor | undefined): string {
  return redact ? redactThenClip(message.slice(0, 65_536), 500, redact) : message.slice(0, 500);
}

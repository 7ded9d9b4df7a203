/** The options, status and outcome types of `startPreparationWorker`, and their validation. */

import type { PreparationJobResult } from '../core/background/run-preparation-job.js';
import type { TokenCounter } from '../core/counting/token-counter.js';
import { CompactError } from '../core/errors.js';
import type { CompactEventListener, CompactEventName, EventExporter } from '../core/events/events.js';
import type { RedactorOptions } from '../core/redaction/redactor.js';
import type { SessionStore } from '../core/session/session-store.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import type { QueueConnection } from './load-bullmq.js';

/** Jobs a worker runs at once by default: summaries are I/O-bound LLM calls. */
export const DEFAULT_WORKER_CONCURRENCY = 16;

/** Options of `startPreparationWorker`. */
export interface PreparationWorkerOptions {
  /** The Redis the queue lives in: a URL, or BullMQ connection options. */
  connection: QueueConnection;
  /** The session store the agents use: the worker reads versions there and publishes summaries. */
  store: SessionStore;
  /** Who writes the summaries. @default the built-in summarizer */
  summarizer?: Summarizer;
  /**
   * Fall back to the built-in summarizer when `summarizer` fails, instead of failing the job
   * (which the queue retries, then dead-letters). @default false
   */
  fallbackToEmbedded?: boolean;
  /** The queue's name (the agents' queue must use the same). @default 'agent-compaction-prepare' */
  name?: string;
  /** BullMQ's key prefix in Redis. @default 'bull' */
  prefix?: string;
  /**
   * Jobs this worker runs at once. LLM summaries wait on the network, not the CPU: many run
   * at once (bound the provider with `rateLimit`). @default DEFAULT_WORKER_CONCURRENCY (16)
   */
  concurrency?: number;
  /**
   * At most `max` jobs per `durationMs` across every worker of the queue (BullMQ's limiter is
   * the queue's): one queue per provider gives a rate limit per provider.
   */
  rateLimit?: { max: number; durationMs: number };
  /** Time limit of one job's summarization, in milliseconds. @default the summarizer's `maxDurationMs` + 1 s, or 30 s */
  timeoutMs?: number;
  /** Counts the summary's tokens (its limit). @default the counter of `model` */
  tokenCounter?: TokenCounter;
  /** The model whose tokenizer counts. @default 'gpt-4o' */
  model?: string;
  /** Redacts the summaries written and the events (the jobs come redacted). `false`: off. @default {} */
  redaction?: RedactorOptions | false;
  /** Where the worker's events go (summaries created, summarizer errors, dead letters). @default [] */
  exporters?: EventExporter[];
  /** How often stalled jobs (of a worker that died) are looked for, in milliseconds. @default 30000 */
  stalledIntervalMs?: number;
  /** How long a job's lock lives without renewal, in milliseconds. @default 30000 */
  lockDurationMs?: number;
  /** Times a stalled job (its worker died) is run again before it fails. @default 1 */
  maxStalledCount?: number;
  /** Called after each run of a job (for metrics and logs). */
  onJobDone?: (outcome: PreparationJobOutcome) => void;
  /**
   * The installation's summary key(s), as the agents' `summaryKeys`: each published summary
   * is signed with the first, and the agents adopt only what verifies under their key. The
   * worker needs the agents' key. @default `COMPACT_SUMMARY_KEY`, else the key file (as the agents)
   */
  summaryKeys?: string | readonly string[];
  /**
   * Called when the worker cannot reach Redis (at start or later), once per outage, as soon
   * as a connection attempt fails; the worker keeps retrying with backoff (1 s growing to
   * 20 s) and the same message goes out as a `compact.error` (`storage_failed`). The CLI
   * prints it.
   */
  onConnectionError?: (message: string) => void;
}

/** One run of a job, as `onJobDone` receives it. */
export interface PreparationJobOutcome {
  readonly jobId: string;
  readonly sessionId: string;
  /** The summary version the job extends. */
  readonly baseVersion: number;
  /** The run's attempt number (1 for the first). */
  readonly attempt: number;
  readonly result: PreparationJobResult | 'failed';
  /** True when the run called the summarizer (a result other than `published` then means its work was not used). */
  readonly summarized: boolean;
  /** When failed: the error's code (`summarizer_failed`, `storage_failed`, ...). */
  readonly errorType?: string;
  /** When failed: the error's message (redacted, at most 500 characters). */
  readonly error?: string;
  /** True when this failure spent the job's last attempt (it is dead-lettered). */
  readonly deadLettered?: boolean;
  /**
   * True when the run was cancelled because its agent withdrew the job while it ran (the
   * session closed or moved past its version): the summarizer call, if `summarized`, was
   * aborted before it answered; the result is `superseded`.
   */
  readonly cancelled?: boolean;
}

/** What a worker did so far. */
export interface PreparationWorkerStatus {
  /** Jobs run to an outcome (published, superseded, already prepared or expired). */
  processed: number;
  /** Summaries published. */
  published: number;
  /** Jobs dropped because their session moved on. */
  superseded: number;
  /** Jobs whose version was published before (a retry or a duplicate). */
  alreadyPrepared: number;
  /** Jobs dropped unsummarized: they could not be published before their deadline (the session's trigger). */
  expired: number;
  /** Runs that failed (each retried until the attempts are spent). */
  failed: number;
  /** Jobs that failed every attempt. */
  deadLettered: number;
  /** Summarizer runs started (at most one per job run). */
  summarizerRuns: number;
  /** Jobs running now. */
  running: number;
  /**
   * Times a picked job was held for later: the fleet's schedule starts it as late as the jobs
   * due before it and the workers' slots allow (its `dueAt`, the session's expected trigger).
   */
  held: number;
  /**
   * Runs cancelled because their agent withdrew the job while they ran (counted in
   * `superseded` too); those whose summarizer call had started are in `summarizerRuns`.
   */
  cancelled: number;
  /**
   * The run and due-time margins this worker's schedule plans held jobs with now
   * (fleet-schedule.ts, due-drift.ts); absent before its first timed run (published, or
   * summarized too late to publish).
   */
  margins?: PreparationWorkerMargins;
}

/** The margins a worker learned from its own runs and the schedule's due times. */
export interface PreparationWorkerMargins {
  /** The median of the last timed runs' times (ms): a held job's run is planned with it. */
  readonly runMedianMs: number;
  /** Their p90 (ms). */
  readonly runP90Ms: number;
  /** The margin for a run's own time (ms): the p90 over the median (at least 100 ms). */
  readonly runMarginMs: number;
  /** The margin for a due time's error, as a share of the time to it (learned: the p90 of how far due times came earlier). */
  readonly dueDriftShare: number;
  /** Due-time samples the share is learned from (the default 0.25 until 8). */
  readonly dueDriftSamples: number;
}

/** A running preparation worker. */
export interface PreparationWorker {
  readonly name: string;
  status(): PreparationWorkerStatus;
  /** Subscribes to the worker's events (`'*'`: all); returns the unsubscribe function. */
  on<N extends CompactEventName>(name: N | '*', listener: CompactEventListener<N>): () => void;
  /**
   * Finishes the jobs running (or abandons them to a retry when `force`), then disconnects:
   * waits for Redis up to a second once no job runs, then drops the connections (a stalled or
   * unreachable Redis never answers the commands in flight).
   */
  close(force?: boolean): Promise<void>;
}

/** Validates the worker's numeric options (errors name the field). */
export function checkPreparationWorkerOptions(options: PreparationWorkerOptions): void {
  const integer = (value: number | undefined, name: string) => {
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw new CompactError('invalid_config', `${name} must be a positive integer (got ${String(value)})`, {
        issues: [{ path: [name], message: 'must be a positive integer' }],
      });
  };
  integer(options.concurrency, 'concurrency');
  integer(options.rateLimit?.max, 'rateLimit.max');
  integer(options.rateLimit?.durationMs, 'rateLimit.durationMs');
  integer(options.stalledIntervalMs, 'stalledIntervalMs');
  integer(options.lockDurationMs, 'lockDurationMs');
  integer(options.maxStalledCount, 'maxStalledCount');
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0))
    throw new CompactError('invalid_config', 'timeoutMs must be a positive number', {
      issues: [{ path: ['timeoutMs'], message: 'must be a positive number' }],
    });
  if (!options.store || typeof options.store.get !== 'function')
    throw new CompactError('invalid_config', 'store must be a SessionStore', {
      issues: [{ path: ['store'], message: 'must be a SessionStore' }],
    });
}

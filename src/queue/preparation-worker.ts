/**
 * The worker's side of the BullMQ preparation queue: runs each job with the configured
 * summarizer (core's `runPreparationJob`: fenced by the session's version before the
 * summarizer and before publishing) and publishes the summary in the session store. Inside an
 * agent process or on its own machine (`agent-compaction worker --config compact.yaml`).
 *
 * A job whose summarizer fails is retried with backoff (the queue's `attempts`), then kept as
 * a dead letter with one `compact.warning` (`preparation_dead_lettered`); the agents compact
 * at their trigger as without a queue. A worker that dies mid-job leaves it stalled: another
 * worker runs it again after `stalledIntervalMs`; the fence keeps a second publish out.
 */

import type { Job, Worker } from 'bullmq';
import { type PreparationJobResult, runPreparationJob } from '../core/background/run-preparation-job.js';
import type { TokenCounter } from '../core/counting/token-counter.js';
import { tokenCounterFor } from '../core/counting/token-counter.js';
import { CompactError, isCompactError } from '../core/errors.js';
import { EventBus, newOperation } from '../core/events/event-bus.js';
import type { CompactEventListener, CompactEventName, EventExporter } from '../core/events/events.js';
import { DEFAULT_SUMMARIZER_TIMEOUT_MS } from '../core/manager/manager-options.js';
import { createRedactor, type Redactor, type RedactorOptions } from '../core/redaction/redactor.js';
import type { PreparationJob } from '../core/session/preparation-queue.js';
import type { SessionStore } from '../core/session/session-store.js';
import { EmbeddedSummarizer } from '../core/summary/embedded/index.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import { SummaryMarks } from '../core/summary/summary-mark.js';
import { DEFAULT_PREPARATION_QUEUE_NAME } from './bullmq-preparation-queue.js';
import { connectionOptions, loadBullmq, type QueueConnection } from './load-bullmq.js';

/** Jobs a worker runs at once by default: summaries are I/O-bound LLM calls. */
export const DEFAULT_WORKER_CONCURRENCY = 16;

/** Options of {@link startPreparationWorker}. */
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
}

/** A running preparation worker. */
export interface PreparationWorker {
  readonly name: string;
  status(): PreparationWorkerStatus;
  /** Subscribes to the worker's events (`'*'`: all); returns the unsubscribe function. */
  on<N extends CompactEventName>(name: N | '*', listener: CompactEventListener<N>): () => void;
  /** Finishes the jobs running (or abandons them to a retry when `force`), then disconnects. */
  close(force?: boolean): Promise<void>;
}

/** Validates the worker's numeric options (errors name the field). */
function checkOptions(options: PreparationWorkerOptions): void {
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

/**
 * Starts a worker of the preparation queue (imports the `bullmq` peer). Resolves once it
 * listens for jobs.
 */
export async function startPreparationWorker(options: PreparationWorkerOptions): Promise<PreparationWorker> {
  checkOptions(options);
  const { Worker } = await loadBullmq();
  const name = options.name ?? DEFAULT_PREPARATION_QUEUE_NAME;
  const embedded = new EmbeddedSummarizer();
  const summarizer: Summarizer = options.summarizer ?? embedded;
  const chain =
    summarizer !== embedded && options.fallbackToEmbedded === true ? [summarizer, embedded] : [summarizer];
  const redact: Redactor | undefined =
    options.redaction === false ? undefined : createRedactor(options.redaction ?? {});
  const bus = new EventBus(options.exporters ?? [], undefined, redact);
  const marks = new SummaryMarks(options.summaryKeys);
  const counter = options.tokenCounter ?? tokenCounterFor(options.model ?? 'gpt-4o');
  const timeoutMs =
    options.timeoutMs ??
    (summarizer.maxDurationMs ? summarizer.maxDurationMs + 1000 : DEFAULT_SUMMARIZER_TIMEOUT_MS);
  const status: PreparationWorkerStatus = {
    processed: 0,
    published: 0,
    superseded: 0,
    alreadyPrepared: 0,
    expired: 0,
    failed: 0,
    deadLettered: 0,
    summarizerRuns: 0,
    running: 0,
  };
  const counted: Record<PreparationJobResult, keyof PreparationWorkerStatus> = {
    published: 'published',
    superseded: 'superseded',
    already_prepared: 'alreadyPrepared',
    expired: 'expired',
  };
  // How long published runs took (the latest ones): a job due sooner is dropped unsummarized.
  const runTimes = new RunTimes();
  // Jobs whose current run called the summarizer (told with the run's outcome).
  const summarizedRuns = new Set<string>();
  const tell = (
    job: Job<PreparationJob>,
    result: PreparationJobOutcome['result'],
    attempt: number,
    error?: Error,
    last?: boolean,
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
      });
    } catch {
      // A failing hook costs the hook only.
    }
  };
  const run = async (job: Job<PreparationJob>, _token?: string, signal?: AbortSignal) => {
    const data = job.data;
    const context = newOperation(data.sessionId);
    const started = Date.now();
    status.running++;
    try {
      const result = await runPreparationJob(data, {
        store: options.store,
        chain: chain.map((member) =>
          counting(member, () => {
            status.summarizerRuns++;
            summarizedRuns.add(String(job.id));
          }),
        ),
        counter,
        timeoutMs,
        redact,
        emit: (event, properties, start) => bus.emit(context, event, properties, { start }),
        marks,
        expectedMs: () => runTimes.fastest(),
        ...(signal ? { signal } : {}),
      });
      if (result === 'published') runTimes.record(Date.now() - started);
      status.processed++;
      status[counted[result]]++;
      return { result, attempt: job.attemptsMade + 1 };
    } catch (error) {
      status.failed++;
      throw error;
    } finally {
      status.running--;
    }
  };
  const worker: Worker<PreparationJob, { result: PreparationJobResult; attempt: number }> = new Worker<
    PreparationJob,
    { result: PreparationJobResult; attempt: number }
  >(name, run, {
    connection: connectionOptions(options.connection, 'worker'),
    concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
    ...(options.prefix ? { prefix: options.prefix } : {}),
    ...(options.rateLimit
      ? { limiter: { max: options.rateLimit.max, duration: options.rateLimit.durationMs } }
      : {}),
    ...(options.stalledIntervalMs ? { stalledInterval: options.stalledIntervalMs } : {}),
    ...(options.lockDurationMs ? { lockDuration: options.lockDurationMs } : {}),
    ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
  });
  // Connection errors are retried by the worker (with backoff); said once per outage.
  const where = redisWhere(options.connection);
  let unreachable = false;
  worker.on('error', (error) => {
    if (unreachable) return;
    unreachable = true;
    const message = `the worker cannot reach Redis at ${where} (${error?.message ?? String(error)}); retrying with backoff`;
    bus.emit(
      newOperation(name),
      'compact.error',
      { errorType: 'storage_failed', message, fallback: 'retry', context: { queue: name } },
      { start: Date.now() },
    );
    try {
      options.onConnectionError?.(message);
    } catch {
      // A failing hook costs the hook only.
    }
  });
  worker.on('ready', () => {
    unreachable = false;
  });
  // Outcomes are told once the queue recorded them (a completed job is counted as completed).
  worker.on('completed', (job, done: { result: PreparationJobResult; attempt: number }) =>
    tell(job, done.result, done.attempt),
  );
  worker.on('failed', (job, error) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1);
    tell(job, 'failed', job.attemptsMade, error, last);
    if (!last) return;
    status.deadLettered++;
    deadLetter(bus, job, error);
  });
  // The tokenizer's tables and the redactor's patterns load now, not inside the first job.
  await counter.ready?.();
  counter.countText('warm');
  redact?.('warm');
  // The key is read now: a worker whose key cannot be read says so once, at start.
  marks.recordMac(name, ['warm']);
  if (marks.problem)
    bus.emit(
      newOperation(name),
      'compact.error',
      {
        errorType: 'invalid_config',
        message: `${marks.problem}: the agents will refuse this worker's summaries (give it their summary key)`,
        fallback: 'none',
        context: { queue: name },
      },
      { start: Date.now() },
    );
  // The store connects now too (a read of nothing): the first job does not pay for it.
  await options.store.get(`${name}::worker-warm-up`).catch(() => undefined);
  await worker.waitUntilReady();
  return {
    name,
    status: () => ({ ...status }),
    on: (event, listener) => bus.on(event, listener),
    async close(force = false) {
      await worker.close(force);
      await bus.shutdown();
    },
  };
}

/** The times of the latest published runs (the newest {@link RUN_TIMES_KEPT}). */
class RunTimes {
  readonly #times: number[] = [];

  record(ms: number): void {
    this.#times.push(ms);
    if (this.#times.length > RUN_TIMES_KEPT) this.#times.shift();
  }

  /**
   * The fastest recent run's time (a job is dropped only when even that would be late: a drop
   * costs the agent a compaction at its trigger; the first runs are slow); `undefined` before a run.
   */
  fastest(): number | undefined {
    return this.#times.length === 0 ? undefined : Math.min(...this.#times);
  }
}

/** Published runs whose times a worker keeps (for the deadline check). */
const RUN_TIMES_KEPT = 32;

/** Host and port of the connection, for messages (never the password). */
function redisWhere(connection: QueueConnection): string {
  if (typeof connection !== 'string') {
    const options = connection as { host?: string; port?: number };
    return `${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
  }
  try {
    const url = new URL(connection);
    return `${url.hostname}:${url.port || 6379}`;
  } catch {
    return 'the configured URL';
  }
}

/** `summarizer`, calling `onRun` at each run (the worker's count of summarizer runs). */
function counting(summarizer: Summarizer, onRun: () => void): Summarizer {
  return new Proxy(summarizer, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'summarize') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: Parameters<Summarizer['summarize']>) => {
        onRun();
        return target.summarize(...args);
      };
    },
  });
}

/** The one event of a job that failed every attempt. */
function deadLetter(bus: EventBus, job: Job<PreparationJob>, error: Error): void {
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
        error: error.message.slice(0, 500),
      },
    },
    { start: Date.now() },
  );
}

/** The error's code: a `CompactError`'s, else `summarizer_failed` (a summarizer threw it). */
function errorTypeOf(error: Error): string {
  return isCompactError(error) ? error.code : 'summarizer_failed';
}

/** A message for a hook: redacted, at most 500 characters. */
function clip(message: string, redact: Redactor | undefined): string {
  const short = message.slice(0, 500);
  return redact ? redact(short) : short;
}

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

import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { type PreparationJobResult, runPreparationJob } from '../core/background/run-preparation-job.js';
import { type TokenCounter, tokenCounterFor } from '../core/counting/token-counter.js';
import { EventBus, newOperation } from '../core/events/event-bus.js';
import { DEFAULT_SUMMARIZER_TIMEOUT_MS } from '../core/manager/manager-options.js';
import type { PreparationJob } from '../core/queues/preparation-queue.js';
import { type Redactor, redactorSteps } from '../core/redaction/redactor.js';
import { releasableRedactor } from '../core/redaction/releasable-redactor.js';
import { EmbeddedSummarizer } from '../core/summary/embedded/index.js';
import type { Summarizer } from '../core/summary/summarizer.js';
import { SummaryMarks } from '../core/summary/summary-mark.js';
import { DEFAULT_PREPARATION_QUEUE_NAME } from './bullmq-preparation-queue.js';
import { ConnectionWatch } from './connection-watch.js';
import { DueDrift } from './due-drift.js';
import { FleetClock, shiftedJob } from './fleet-clock.js';
import { type ScheduleClient, scheduleKeys, WorkerSchedule, withdrawnChannel } from './fleet-schedule.js';
import { type BullMq, connectionOptions, loadBullmq } from './load-bullmq.js';
import {
  checkPreparationWorkerOptions,
  DEFAULT_WORKER_CONCURRENCY,
  type PreparationWorker,
  type PreparationWorkerOptions,
  type PreparationWorkerStatus,
} from './preparation-worker-options.js';
import { RunTimes } from './run-times.js';
import { type JobDone, outcomeTeller, tellOutcomes } from './tell-outcomes.js';
import {
  type DuplicableClient,
  listenForWithdrawals,
  WITHDRAWN_REASON,
  withdrawnWhileRunning,
} from './withdrawals.js';
import { closeWorker, RunningJobs } from './worker-close.js';
import { runPlan, withMargins } from './worker-margins.js';

/**
 * Starts a worker of the preparation queue (imports the `bullmq` peer). Resolves once it
 * listens for jobs.
 */
export function startPreparationWorker(options: PreparationWorkerOptions): Promise<PreparationWorker> {
  return startProbedWorker(options);
}

/**
 * {@link startPreparationWorker} after a start-up probe the caller already made
 * (`probeRedis`, as soon as it knew the URL: the CLI's worker says an outage before loading
 * the rest). The probe's answer is told here as from the worker's own probe.
 */
export async function startProbedWorker(
  options: PreparationWorkerOptions,
  probe?: Promise<string | undefined>,
): Promise<PreparationWorker> {
  checkPreparationWorkerOptions(options);
  const setup = workerSetup(options);
  const { name, bus } = setup;
  // Said at once, not after bullmq's import: that import is one synchronous stretch (a second
  // or more on a loaded machine) in which the probe's answer could not be read. The wait is one
  // connect (at most PROBE_TIMEOUT_MS when Redis does not answer).
  const connection = new ConnectionWatch(options, bus, name);
  await connection.probe(probe);
  const bullmq = await loadBullmq();
  const { Worker } = bullmq;
  const status = newWorkerStatus();
  // Jobs whose current run called the summarizer (told with the run's outcome).
  const summarizedRuns = new Set<string>();
  const tell = outcomeTeller(options, setup.redact, summarizedRuns);
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  // How long runs took (the latest that published or summarized): a job due sooner is dropped unsummarized.
  const runTimes = new RunTimes();
  // How far due times came earlier while their jobs ran: a held job's margin for the estimate.
  const drift = new DueDrift();
  // The runs in progress, which close() lets finish.
  const runs = new RunningJobs(status);
  // The fleet-wide schedule talks to Redis on the worker's own client (made just below).
  let client!: (value: Promise<ScheduleClient>) => void;
  const scheduleClient = new Promise<ScheduleClient>((resolve) => {
    client = resolve;
  });
  const keys = scheduleKeys((type) => `${options.prefix ?? 'bull'}:${name}:${type}`);
  // The jobs' times are on the fleet's clock (Redis's), whatever this machine's says.
  const clock = FleetClock.of(() => scheduleClient, keys);
  const schedule = new WorkerSchedule(scheduleClient, keys, randomUUID(), concurrency, () => clock.now());
  const worker: Worker<PreparationJob, JobDone> = new Worker<PreparationJob, JobDone>(
    name,
    spentOnCompletion(
      jobRunner(options, setup, status, summarizedRuns, { schedule, bullmq, runTimes, drift, runs, clock }),
      status,
    ),
    {
      connection: connectionOptions(options.connection, 'worker'),
      concurrency,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      ...(options.rateLimit
        ? { limiter: { max: options.rateLimit.max, duration: options.rateLimit.durationMs } }
        : {}),
      ...(options.stalledIntervalMs ? { stalledInterval: options.stalledIntervalMs } : {}),
      ...(options.lockDurationMs ? { lockDuration: options.lockDurationMs } : {}),
      ...(options.maxStalledCount !== undefined ? { maxStalledCount: options.maxStalledCount } : {}),
    },
  );
  client(worker.getBackend().client);
  connection.watch(worker);
  // A job its agent withdraws while it runs is cancelled here (its summarizer call aborted).
  // Not awaited: the client resolves once Redis is reached, and a worker that cannot reach it
  // must say so at once (ConnectionWatch) and keep retrying.
  const listening = listenForWithdrawals(
    worker.getBackend().client as Promise<DuplicableClient>,
    withdrawnChannel(keys),
    (jobId) => worker.cancelJob(jobId, WITHDRAWN_REASON),
  );
  tellOutcomes(worker, tell, status, bus, setup.redact);
  await warmUp(options, setup);
  await worker.waitUntilReady();
  await clock.sync();
  await schedule.start();
  return {
    name,
    status: () => withMargins(status, runTimes, drift),
    on: (event, listener) => bus.on(event, listener),
    async close(force = false) {
      // The runs in progress finish; a stalled Redis then gets a bound (worker-close.ts).
      await closeWorker({ schedule, listening, worker, runs }, force);
      await bus.shutdown();
    },
  };
}

/**
 * A job as the worker keeps it: when the fleet's schedule first held it (epoch ms), and whether
 * a run of it completed (`spent`: its messages dropped, see {@link spentOnCompletion}).
 */
type HeldJob = PreparationJob & { heldAt?: number; spent?: true };

type JobRun = (job: Job<PreparationJob>, token?: string, signal?: AbortSignal) => Promise<JobDone>;

/**
 * `run`, after which a job that completed keeps only what names it: a completed job is kept
 * (`keepCompletedSeconds`, an hour by default) for its id alone (a later add of it is a no-op),
 * and its folded messages, several times their text as JSON, held Redis memory that grew with
 * every session (46 KB a job for a 7,000-token fold). A failed run keeps them for its retries
 * and dead letter. A job whose run completed but whose worker died before BullMQ recorded it
 * (picked again, spent) is not run again.
 */
function spentOnCompletion(run: JobRun, status: PreparationWorkerStatus): JobRun {
  return async (job, token, signal) => {
    const data = job.data as HeldJob;
    if (data.spent) {
      status.processed++;
      status.superseded++;
      return { result: 'superseded', attempt: job.attemptsMade + 1 };
    }
    const done = await run(job, token, signal);
    // What names the job stays (its session and version, for onJobDone and the queue's views).
    const { previousSummary, ...named } = job.data;
    const spent: HeldJob = { ...named, messages: [], foldedIds: [], foldedHashes: [], spent: true };
    await job.updateData(spent).catch(() => {});
    return done;
  };
}

/** The worker's parts built from its options. */
interface WorkerSetup {
  name: string;
  chain: Summarizer[];
  redact: Redactor | undefined;
  /** Compiles the redaction rules in slices (the first redaction before it compiles them at once). */
  warmRedaction: () => Promise<void>;
  bus: EventBus;
  marks: SummaryMarks;
  counter: TokenCounter;
  timeoutMs: number;
}

/** The summarizer chain, redactor, events, keys, counter and time limit the options ask for. */
function workerSetup(options: PreparationWorkerOptions): WorkerSetup {
  const embedded = new EmbeddedSummarizer();
  const summarizer: Summarizer = options.summarizer ?? embedded;
  // Patterns checked now (a bad one throws here); the rules compiled in warmUp's slices.
  const rules =
    options.redaction === false ? undefined : releasableRedactor(redactorSteps(options.redaction ?? {}));
  const redact: Redactor | undefined = rules?.redact;
  return {
    name: options.name ?? DEFAULT_PREPARATION_QUEUE_NAME,
    chain:
      summarizer !== embedded && options.fallbackToEmbedded === true ? [summarizer, embedded] : [summarizer],
    redact,
    warmRedaction: async () => rules?.warm(),
    bus: new EventBus(options.exporters ?? [], undefined, redact),
    marks: new SummaryMarks(options.summaryKeys),
    counter: options.tokenCounter ?? tokenCounterFor(options.model ?? 'gpt-4o'),
    timeoutMs:
      options.timeoutMs ??
      (summarizer.maxDurationMs ? summarizer.maxDurationMs + 1000 : DEFAULT_SUMMARIZER_TIMEOUT_MS),
  };
}

const COUNTED: Record<PreparationJobResult, keyof PreparationWorkerStatus> = {
  published: 'published',
  superseded: 'superseded',
  already_prepared: 'alreadyPrepared',
  expired: 'expired',
};

/**
 * Runs one job (core's `runPreparationJob`), counting it in `status`; a job the fleet's
 * schedule says is not due yet is held (moved to BullMQ's delayed set) instead.
 */
function jobRunner(
  options: PreparationWorkerOptions,
  setup: WorkerSetup,
  status: PreparationWorkerStatus,
  summarizedRuns: Set<string>,
  fleet: {
    schedule: WorkerSchedule;
    bullmq: BullMq;
    runTimes: RunTimes;
    drift: DueDrift;
    runs: RunningJobs;
    clock: FleetClock;
  },
) {
  const { runTimes, drift, runs, clock } = fleet;
  return async (job: Job<PreparationJob>, token?: string, signal?: AbortSignal): Promise<JobDone> => {
    const data = job.data as HeldJob;
    const id = String(job.id);
    void clock.sync();
    const hold = token ? await fleet.schedule.hold(id, data, runPlan(runTimes, drift)) : undefined;
    // Withdrawn by its agent while this worker held it again: nothing will use it.
    if (hold === 'withdrawn') {
      status.processed++;
      status.superseded++;
      return { result: 'superseded', attempt: job.attemptsMade + 1 };
    }
    const until = hold?.until;
    const { heldAt } = data;
    if (until !== undefined && token && (await putBack(job, until, token, clock))) {
      status.held++;
      throw new fleet.bullmq.DelayedError();
    }
    const context = newOperation(data.sessionId);
    const started = Date.now();
    // The due time its start was decided on, read again when the run ends: how far it moved.
    const reading = hold ? { at: started, dueAt: hold.dueAt } : undefined;
    runs.start();
    try {
      // Its deadline on this machine's clock, which the run's checks read.
      const result = await runPreparationJob(shiftedJob(data, -clock.offset()), {
        store: options.store,
        chain: setup.chain.map((member) =>
          counting(member, () => {
            status.summarizerRuns++;
            summarizedRuns.add(String(job.id));
          }),
        ),
        counter: setup.counter,
        timeoutMs: setup.timeoutMs,
        redact: setup.redact,
        emit: (event, properties, start) => setup.bus.emit(context, event, properties, { start }),
        marks: setup.marks,
        expectedMs: () => runTimes.fastest(),
        ...(heldAt !== undefined ? { heldMs: Math.max(0, clock.now() - heldAt) } : {}),
        ...(signal ? { signal } : {}),
      });
      // Timed too when it summarized but came too late to publish (runs always late taught nothing).
      if (result === 'published' || summarizedRuns.has(id)) runTimes.record(Date.now() - started);
      status.processed++;
      status[COUNTED[result]]++;
      return { result, attempt: job.attemptsMade + 1 };
    } catch (error) {
      // Withdrawn by its agent while it ran: nothing will use it (not retried).
      if (withdrawnWhileRunning(signal)) {
        status.processed++;
        status.superseded++;
        status.cancelled++;
        return { result: 'superseded', attempt: job.attemptsMade + 1, cancelled: true };
      }
      status.failed++;
      throw error;
    } finally {
      runs.end();
      const dueAt = await fleet.schedule.done(id);
      if (reading && dueAt !== undefined) drift.record(reading, { at: Date.now(), dueAt });
    }
  };
}

/**
 * Puts `job` back until its start (`until`, on the fleet's clock), its first hold noted in it
 * (the published record tells how long it was held); false when it cannot be put back (its lock
 * lost): it runs now.
 */
async function putBack(
  job: Job<PreparationJob>,
  until: number,
  token: string,
  clock: FleetClock,
): Promise<boolean> {
  const data = job.data as HeldJob;
  if (data.heldAt === undefined) {
    const noted: HeldJob = { ...data, heldAt: clock.now() };
    await job.updateData(noted).catch(() => {});
  }
  return job.moveToDelayed(until - clock.offset(), token).then(
    () => true,
    () => false,
  );
}

/** A worker's counts before its first job. */
function newWorkerStatus(): PreparationWorkerStatus {
  return {
    processed: 0,
    published: 0,
    superseded: 0,
    alreadyPrepared: 0,
    expired: 0,
    failed: 0,
    deadLettered: 0,
    summarizerRuns: 0,
    running: 0,
    held: 0,
    cancelled: 0,
  };
}

/** Loads what the first job would otherwise pay for, and says at once when the key cannot be read. */
async function warmUp(options: PreparationWorkerOptions, setup: WorkerSetup): Promise<void> {
  const { counter, redact, marks, bus, name } = setup;
  // The tokenizer's tables and the redactor's patterns load now, not inside the first job.
  await counter.ready?.();
  counter.countText('warm');
  await setup.warmRedaction();
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
}

/** `summarizer`, calling `onRun` at each run (the worker's count of summarizer runs). */
function counting(summarizer: Summarizer, onRun: () => void): Summarizer {
  return new Proxy(summarizer, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'summarize') return typeof value === 'function' ? value.bind(target) : value;
      return (...args: Parameters<Summarizer['summarize']>) => {
        // Withdrawn before the call: no call is made (and none counted).
        if (args[0]?.signal?.aborted) return Promise.reject(args[0].signal.reason);
        onRun();
        return target.summarize(...args);
      };
    },
  });
}

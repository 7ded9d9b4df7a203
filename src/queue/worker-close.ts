/**
 * The worker's close at a stalled or unreachable Redis. BullMQ's graceful close waits for the
 * jobs running, then for its commands in flight, which such a server never answers: the worker
 * (and `agent-compaction worker` on SIGTERM) waited until the server answered again, forever
 * were it never to. Here the jobs' runs (summarizer and publish) still finish however long they
 * take; once none runs, the close gets {@link WORKER_CLOSE_TIMEOUT_MS} with no run starting,
 * then the connections are dropped (as the agent's queue and the Redis session store do); their
 * commands in flight fail once ioredis ends them (within its `disconnectTimeout`, 2 s).
 */

/** How long the worker's close waits for Redis once no job runs before it drops the connections (ms). */
export const WORKER_CLOSE_TIMEOUT_MS = 1_000;

/**
 * The worker's job runs in progress (their summarizer and publish), which its close waits for;
 * counted in the worker's status (`running`) too.
 */
export class RunningJobs {
  #running = 0;
  #started = 0;
  #idle: (() => void)[] = [];

  constructor(private readonly status: { running: number }) {}

  /** How many runs started so far (a run that started and ended meanwhile shows here). */
  get started(): number {
    return this.#started;
  }

  get running(): number {
    return this.#running;
  }

  start(): void {
    this.status.running++;
    this.#running++;
    this.#started++;
  }

  end(): void {
    this.status.running--;
    this.#running--;
    if (this.#running === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Resolves once no run is in progress. */
  idle(): Promise<void> {
    return this.#running === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }
}

/** What the worker's close stops: its schedule, withdrawals listener and BullMQ worker. */
interface ClosingWorker {
  schedule: { stop(): Promise<void> };
  listening: Promise<() => void>;
  worker: { close(force?: boolean): Promise<void>; disconnect(): Promise<void> };
  runs: RunningJobs;
}

/**
 * Closes the worker's parts in order (the schedule's slots left, the listener stopped, BullMQ's
 * close); the runs in progress finish, then a stalled Redis gets {@link WORKER_CLOSE_TIMEOUT_MS}.
 */
export async function closeWorker(parts: ClosingWorker, force: boolean): Promise<void> {
  const { schedule, listening, worker, runs } = parts;
  const closing = (async () => {
    await schedule.stop();
    (await listening)();
    await worker.close(force);
  })();
  await closeOrDrop(closing, runs, async () => {
    (await listening)();
    // Closing first: BullMQ's loops stop instead of retrying on the dropped connections.
    worker.close(true).catch(() => {});
    // Not awaited: a connection waiting to reconnect (the server gone) never tells its end.
    worker.disconnect().catch(() => {});
  });
}

/**
 * Waits for `closing` (the graceful close) while runs are in progress, then up to
 * {@link WORKER_CLOSE_TIMEOUT_MS} with none starting; past that, `drop` (the connections'
 * commands in flight fail, and the graceful close goes on without them).
 */
async function closeOrDrop(
  closing: Promise<unknown>,
  runs: RunningJobs,
  drop: () => Promise<unknown>,
): Promise<void> {
  const closed = closing.then(
    () => true,
    () => true,
  );
  for (;;) {
    // A forced close does not wait for the runs: it may settle first.
    if (!(await Promise.race([runs.idle().then(() => false), closed]))) {
      const started = runs.started;
      if (await settlesWithin(closed, WORKER_CLOSE_TIMEOUT_MS)) return;
      // A run started within the bound (a job picked before the close): it finishes first.
      if (runs.running > 0 || runs.started !== started) continue;
      await drop().catch(() => {});
    }
    return;
  }
}

/** True when `work` settled within `ms`, false once `ms` passed first. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([work.then(() => true), late]).finally(() => clearTimeout(timer));
}

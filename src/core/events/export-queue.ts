import { getDefaultRedactor, type Redactor } from '../redaction/redactor.js';
import type { AnyCompactEvent, EventExporter } from './events.js';

/** Options of {@link ExportQueue}. */
export interface ExportQueueOptions {
  /**
   * Events held at most; when full, the oldest are dropped and counted.
   * @default 10_000
   */
  maxSize?: number;
  /**
   * Events handed to an exporter in one call at most.
   * @default 512
   */
  maxBatchSize?: number;
  /**
   * Background flush interval in milliseconds (the timer never keeps the process alive).
   * @default 200
   */
  flushIntervalMs?: number;
  /**
   * How long one `export`, `forceFlush` or `shutdown` call may take before the queue stops
   * waiting for it and moves on (a hung exporter never blocks `flush()` forever).
   * @default 30_000
   */
  exportTimeoutMs?: number;
  /**
   * Called when an exporter throws, rejects or times out.
   * @default one `[agent-compaction]` line on stderr, redacted
   */
  onExporterError?: (exporter: string, error: unknown) => void;
}

/**
 * The default `onExporterError`: one `[agent-compaction]` line on stderr, redacted (a network
 * client's error may quote a URL with a key in its query); a line that cannot be redacted is
 * written without the error's message.
 */
export function exporterErrorLine(
  redact: Redactor = getDefaultRedactor(),
): (exporter: string, error: unknown) => void {
  return (exporter, error) => {
    const message = String((error as Error)?.message ?? error);
    let line: string;
    try {
      line = redact(`exporter ${exporter} failed: ${message}`);
    } catch {
      line = 'exporter failed (its message could not be redacted)';
    }
    process.stderr.write(`[agent-compaction] ${line}\n`);
  };
}

/** The queue's defaults. */
export const DEFAULT_EXPORT_QUEUE_OPTIONS = Object.freeze({
  maxSize: 10_000,
  maxBatchSize: 512,
  flushIntervalMs: 200,
  exportTimeoutMs: 30_000,
});

interface Waiter {
  target: number;
  resolve: () => void;
}

/** One exporter's worker: its own place in the queue, so a hung exporter holds up only itself. */
interface Lane {
  exporter: EventExporter;
  /** The sequence number of the next event to send it. */
  next: number;
  /** The lowest sequence number of the batch it is exporting, if any. */
  inFlight: number | undefined;
  running: boolean;
}

/**
 * A bounded queue between the engine and its exporters: `enqueue` never blocks and never
 * throws; batches go out in the background, at the end of each compaction and on
 * `flush()`/`shutdown()`.
 *
 * Each exporter has its own worker that sends it batches in order, each call with its own
 * timeout: a hung exporter holds up only its own batches, the others get theirs meanwhile.
 * Events stay in the queue (and count towards `maxSize`) until every worker has taken them,
 * so a slow exporter makes the queue drop its oldest events rather than grow without bound.
 *
 * @example
 * ```ts
 * const queue = new ExportQueue([consoleExporter()], { maxSize: 1_000 });
 * queue.enqueue(event); // returns at once
 * await queue.flush();  // resolves once every exporter has answered (or timed out)
 * ```
 */
export class ExportQueue {
  readonly #exporters: readonly EventExporter[];
  readonly #lanes: Lane[];
  readonly #maxSize: number;
  readonly #maxBatchSize: number;
  readonly #flushIntervalMs: number;
  readonly #exportTimeoutMs: number;
  readonly #onExporterError: (exporter: string, error: unknown) => void;
  #events: { seq: number; event: AnyCompactEvent }[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Events ever enqueued (the last sequence number). */
  #enqueued = 0;
  #waiters: Waiter[] = [];
  #dropped = 0;
  #closed = false;
  #shutdown: Promise<void> | undefined;

  constructor(exporters: readonly EventExporter[], options: ExportQueueOptions = {}) {
    this.#exporters = [...exporters];
    this.#lanes = this.#exporters.map((exporter) => ({
      exporter,
      next: 1,
      inFlight: undefined,
      running: false,
    }));
    this.#maxSize = Math.max(1, options.maxSize ?? DEFAULT_EXPORT_QUEUE_OPTIONS.maxSize);
    this.#maxBatchSize = Math.max(1, options.maxBatchSize ?? DEFAULT_EXPORT_QUEUE_OPTIONS.maxBatchSize);
    this.#flushIntervalMs = options.flushIntervalMs ?? DEFAULT_EXPORT_QUEUE_OPTIONS.flushIntervalMs;
    this.#exportTimeoutMs = options.exportTimeoutMs ?? DEFAULT_EXPORT_QUEUE_OPTIONS.exportTimeoutMs;
    this.#onExporterError = options.onExporterError ?? exporterErrorLine();
  }

  /** Events dropped because the queue was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Events waiting to be exported. */
  get size(): number {
    return this.#events.length;
  }

  /** Adds an event; drops the oldest when full. Never throws, never waits. */
  enqueue(event: AnyCompactEvent): void {
    if (this.#closed || this.#exporters.length === 0) return;
    this.#enqueued += 1;
    this.#events.push({ seq: this.#enqueued, event });
    if (this.#events.length > this.#maxSize) {
      const excess = this.#events.length - this.#maxSize;
      this.#events.splice(0, excess);
      this.#dropped += excess;
      this.#notify();
    }
    if (this.#timer === undefined && this.#lanes.some((lane) => !lane.running)) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#kick();
      }, this.#flushIntervalMs);
      this.#timer.unref?.();
    }
  }

  /**
   * Sends everything queued so far; resolves when every exporter has answered (or timed
   * out) for those events. Never rejects.
   */
  flush(): Promise<void> {
    const target = this.#enqueued;
    if (this.#lowestPending() > target) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.#waiters.push({ target, resolve }));
    this.#kick();
    return done;
  }

  /** Flushes, then flushes and shuts every exporter down. Later events are ignored. */
  shutdown(): Promise<void> {
    this.#shutdown ??= (async () => {
      await this.flush();
      // Events that arrived while the first flush ran go out too, before the queue closes.
      while (this.#events.length > 0) await this.flush();
      this.#closed = true;
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      await Promise.all(
        this.#exporters.map(async (exporter) => {
          await this.#call(exporter, () => exporter.forceFlush?.());
          await this.#call(exporter, () => exporter.shutdown?.());
        }),
      );
    })();
    return this.#shutdown;
  }

  #kick(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    for (const lane of this.#lanes) {
      if (lane.running) continue;
      lane.running = true;
      void this.#drain(lane);
    }
  }

  /** Sends one exporter its batches in order until it has taken every queued event. */
  async #drain(lane: Lane): Promise<void> {
    try {
      for (;;) {
        // Sequence numbers in the queue are contiguous: events leave only from its front.
        const first = this.#events[0]?.seq ?? lane.next;
        const start = Math.max(0, lane.next - first);
        const entries = this.#events.slice(start, start + this.#maxBatchSize);
        if (entries.length === 0) break;
        lane.inFlight = entries[0]?.seq;
        lane.next = (entries.at(-1)?.seq ?? lane.next) + 1;
        this.#trim();
        const batch = entries.map((entry) => entry.event);
        await this.#call(lane.exporter, () => lane.exporter.export(batch));
        lane.inFlight = undefined;
        this.#trim();
        this.#notify();
      }
    } finally {
      lane.running = false;
      lane.inFlight = undefined;
      this.#trim();
      this.#notify();
    }
  }

  /** Forgets the events every worker has taken. */
  #trim(): void {
    const taken = Math.min(...this.#lanes.map((lane) => lane.next));
    const count = this.#events.findIndex((entry) => entry.seq >= taken);
    this.#events.splice(0, count === -1 ? this.#events.length : count);
  }

  /** The sequence number of the oldest event some exporter has not yet answered for (or dropped). */
  #lowestPending(): number {
    let lowest = Number.POSITIVE_INFINITY;
    const first = this.#events[0]?.seq;
    for (const lane of this.#lanes) {
      const waiting = first === undefined ? undefined : Math.max(lane.next, first);
      const pending =
        lane.inFlight ?? (waiting !== undefined && waiting <= this.#enqueued ? waiting : undefined);
      if (pending !== undefined) lowest = Math.min(lowest, pending);
    }
    return lowest;
  }

  #notify(): void {
    if (this.#waiters.length === 0) return;
    const lowest = this.#lowestPending();
    const ready = this.#waiters.filter((waiter) => waiter.target < lowest);
    this.#waiters = this.#waiters.filter((waiter) => waiter.target >= lowest);
    for (const waiter of ready) waiter.resolve();
  }

  /** Runs one exporter call, catching errors (sync or async) and giving up after the timeout. */
  async #call(exporter: EventExporter, run: () => Promise<void> | undefined): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${this.#exportTimeoutMs} ms`)),
          this.#exportTimeoutMs,
        );
        timer.unref?.();
      });
      await Promise.race([Promise.resolve().then(run), timeout]);
    } catch (error) {
      try {
        // An async reporter's rejection is dropped too: unhandled, it would end the process.
        const reported: unknown = this.#onExporterError(exporter.name, error);
        if (reported instanceof Promise) reported.catch(() => {});
      } catch {
        // An error reporter that throws must not stop the queue.
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}

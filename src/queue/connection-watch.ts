/**
 * How a preparation worker says it cannot reach Redis: once per outage (a `compact.error`
 * `storage_failed` and `onConnectionError`), from the worker's own connection errors (BullMQ
 * retries with backoff) and, at start, from a plain TCP probe answered before `bullmq` is
 * imported (its import alone takes a second or more on a loaded machine).
 */

import type { Worker } from 'bullmq';
import { type EventBus, newOperation } from '../core/events/event-bus.js';
import type { PreparationWorkerOptions } from './preparation-worker-options.js';
import { probeRedis, unreachableMessage } from './redis-probe.js';

/** A worker's connection, told once per outage. */
export class ConnectionWatch {
  readonly #options: PreparationWorkerOptions;
  readonly #bus: EventBus;
  readonly #name: string;
  #unreachable = false;
  #ready = false;

  constructor(options: PreparationWorkerOptions, bus: EventBus, name: string) {
    this.#options = options;
    this.#bus = bus;
    this.#name = name;
  }

  /**
   * Tells the start-up probe's answer (never rejects): `early`, a probe the caller made as soon
   * as it knew the URL ({@link probeRedis}), or one made now. Awaited before importing `bullmq`
   * (one synchronous stretch, a second or more on a loaded machine, in which no answer could be
   * read); the wait is one connect, at most `PROBE_TIMEOUT_MS`.
   */
  async probe(early?: Promise<string | undefined>): Promise<void> {
    const problem = await (early ?? probeRedis(this.#options.connection));
    if (problem && !this.#ready) this.#tell(problem);
  }

  /** Tells the worker's connection errors (retried by BullMQ with backoff), once per outage. */
  watch(worker: Worker): void {
    worker.on('error', (error) => this.#tell(error?.message ?? String(error)));
    worker.on('ready', () => {
      this.#ready = true;
      this.#unreachable = false;
    });
  }

  #tell(problem: string): void {
    if (this.#unreachable) return;
    this.#unreachable = true;
    const message = unreachableMessage(this.#options.connection, problem);
    this.#bus.emit(
      newOperation(this.#name),
      'compact.error',
      { errorType: 'storage_failed', message, fallback: 'retry', context: { queue: this.#name } },
      { start: Date.now() },
    );
    try {
      this.#options.onConnectionError?.(message);
    } catch {
      // A failing hook costs the hook only.
    }
  }
}

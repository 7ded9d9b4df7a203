/**
 * How a preparation worker says it cannot reach Redis: once per outage (a `compact.error`
 * `storage_failed` and `onConnectionError`), from the worker's own connection errors (BullMQ
 * retries with backoff) and, at start, from a plain TCP probe made while `bullmq` is still
 * being imported (its import alone takes a second or more on a loaded machine).
 */

import { connect } from 'node:net';
import type { Worker } from 'bullmq';
import { type EventBus, newOperation } from '../core/events/event-bus.js';
import { connectionOptions, type QueueConnection } from './load-bullmq.js';
import type { PreparationWorkerOptions } from './preparation-worker-options.js';

/** How long the start-up probe waits for Redis to accept a connection (ms). */
export const PROBE_TIMEOUT_MS = 1_000;

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
   * read); the wait is one connect, at most {@link PROBE_TIMEOUT_MS}.
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

/**
 * Tries Redis's address with a plain TCP connect: what went wrong (a refused connection, no
 * answer within {@link PROBE_TIMEOUT_MS}), or `undefined` once it accepts (or for a socket
 * path, not probed). Never rejects.
 */
export function probeRedis(connection: QueueConnection): Promise<string | undefined> {
  const address = redisAddress(connection);
  if (!address) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const socket = connect(address);
    const done = (problem?: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no answer within ${PROBE_TIMEOUT_MS} ms`), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done());
    socket.once('error', (error) => done(error.message));
  });
}

/** The line that says a worker cannot reach Redis (never the password). */
export function unreachableMessage(connection: QueueConnection, problem: string): string {
  return `the worker cannot reach Redis at ${redisWhere(connection)} (${problem}); retrying with backoff`;
}

/**
 * Host and port of the connection, read as the worker's client reads it
 * ({@link connectionOptions}; `undefined`: a socket path, or a URL it refuses).
 */
function redisAddress(connection: QueueConnection): { host: string; port: number } | undefined {
  let options: { host?: unknown; port?: unknown; path?: unknown };
  try {
    options = connectionOptions(connection, 'worker');
  } catch {
    return undefined;
  }
  if (options.path !== undefined) return undefined;
  const host = typeof options.host === 'string' && options.host !== '' ? options.host : '127.0.0.1';
  return { host: host.replace(/^\[|\]$/g, ''), port: Number(options.port ?? 6379) };
}

/** Host and port of the connection, for messages (never the password). */
function redisWhere(connection: QueueConnection): string {
  const address = redisAddress(connection);
  return address ? `${address.host}:${address.port}` : 'the configured URL';
}

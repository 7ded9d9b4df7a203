/**
 * A plain TCP probe of a Redis address and the line that says it cannot be reached: what the
 * worker command loads before anything else (only `node:net` and the connection's parsing), so
 * an outage is said before the config, the store and bullmq are loaded.
 */

import { connect } from 'node:net';
import { connectionOptions, type QueueConnection } from './load-bullmq.js';

/** How long the start-up probe waits for Redis to accept a connection (ms). */
export const PROBE_TIMEOUT_MS = 1_000;

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

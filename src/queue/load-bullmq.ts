/**
 * The optional `bullmq` peer, imported on first use (the package's other entries never load
 * it), and the Redis connection options BullMQ gets from a URL or an options object.
 */

import { CompactError } from '../core/errors.js';

/** The BullMQ module. */
export type BullMq = typeof import('bullmq');

let loading: Promise<BullMq> | undefined;

/** Imports `bullmq` once; `missing_dependency` when it is not installed. */
export function loadBullmq(): Promise<BullMq> {
  loading ??= import('bullmq').catch((error: unknown) => {
    loading = undefined;
    throw new CompactError('missing_dependency', 'install bullmq and ioredis: npm i bullmq ioredis', {
      cause: error,
    });
  });
  return loading;
}

/**
 * Where the queue lives: a Redis URL (`redis://user:pass@host:6379/0`), or BullMQ's
 * connection options (`{ host, port, password, db, tls }`; passed as given).
 */
export type QueueConnection = string | Readonly<Record<string, unknown>>;

/**
 * BullMQ connection options for `connection`. A worker blocks in Redis commands and must
 * wait through reconnects: `maxRetriesPerRequest: null` (BullMQ requires it for workers).
 * A queue's adds fail instead, after a few retries, so an agent never piles up adds on a
 * Redis that is down.
 */
export function connectionOptions(
  connection: QueueConnection,
  role: 'queue' | 'worker',
): Record<string, unknown> {
  const base = typeof connection === 'string' ? urlOptions(connection) : { ...connection };
  return role === 'worker' ? { ...base, maxRetriesPerRequest: null } : { maxRetriesPerRequest: 2, ...base };
}

/** Connection options from a `redis://` or `rediss://` URL (the password is never logged). */
function urlOptions(url: string): Record<string, unknown> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CompactError('invalid_config', 'connection must be a redis:// or rediss:// URL', {
      issues: [{ path: ['connection'], message: 'must be a redis:// or rediss:// URL' }],
    });
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new CompactError(
      'invalid_config',
      `connection must be a redis:// or rediss:// URL (got ${parsed.protocol})`,
      {
        issues: [{ path: ['connection'], message: 'must be a redis:// or rediss:// URL' }],
      },
    );
  const db = parsed.pathname.replace(/^\//, '');
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(db !== '' && /^\d+$/.test(db) ? { db: Number(db) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

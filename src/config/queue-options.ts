/**
 * `queue`: the BullMQ preparation queue of a config (agents) and the worker options of
 * `agent-compaction worker` (workers). `agent-compaction/queue` and its peers are imported
 * only when the config has a `queue`.
 */

import { CompactError } from '../core/errors.js';
import type { PreparationQueue } from '../core/queues/preparation-queue.js';
import type { CompactConfig } from './config-schema.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The queue's Redis URL, from `queue.redis_url_env` (else `sessions.redis_url_env`). */
export function queueUrl(config: CompactConfig, env: Env): string {
  const queue = config.queue;
  if (queue === undefined) throw new CompactError('invalid_config', 'the config has no queue section');
  if (config.sessions.store !== 'redis')
    throw new CompactError(
      'invalid_config',
      'queue needs sessions.store: redis (workers publish summaries there)',
      {
        issues: [{ path: ['sessions', 'store'], message: 'must be redis when queue is set' }],
      },
    );
  const urlEnv = queue.redis_url_env ?? config.sessions.redis_url_env;
  const url = env[urlEnv];
  if (!url)
    throw new CompactError('invalid_config', `queue is set but ${urlEnv} is not set`, {
      issues: [
        {
          path: queue.redis_url_env ? ['queue', 'redis_url_env'] : ['sessions', 'redis_url_env'],
          message: `set ${urlEnv} to the Redis URL`,
        },
      ],
    });
  return url;
}

/** The agents' side: the preparation queue of `queue`, or `undefined` without one. */
export async function buildPreparationQueue(
  config: CompactConfig,
  env: Env,
): Promise<PreparationQueue | undefined> {
  if (config.queue === undefined) return undefined;
  const connection = queueUrl(config, env);
  const { bullmqPreparationQueue } = await import('../queue/index.js');
  return bullmqPreparationQueue({
    connection,
    name: config.queue.name,
    attempts: config.queue.attempts,
    backoffMs: config.queue.backoff_ms,
  });
}

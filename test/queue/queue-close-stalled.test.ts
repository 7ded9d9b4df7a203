/**
 * The agent's queue closes while Redis is stalled with a command in flight (SIGSTOP: the server
 * accepts and never answers): `close()` drops the connection past its bound, as the Redis
 * session store's does, where it waited for an answer until the server came back (forever,
 * were it never to). Real redis-server of its own (it is stopped).
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bullmqPreparationQueue } from '../../src/queue/index.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('queue close at a stalled Redis');

describe.runIf(redis.available)('the preparation queue at a stalled Redis', () => {
  it('close() settles while the server is still stopped', { timeout: 60_000 }, async () => {
    const queue = bullmqPreparationQueue({ connection: redis.server.url, name: `q-${randomUUID()}` });
    await queue.counts();
    process.kill(redis.server.pid, 'SIGSTOP');
    try {
      // A command in flight that the stopped server never answers.
      const inFlight = queue.counts().then(
        () => 'answered',
        () => 'failed',
      );
      // The server runs again only after close() settled (finally): before, close() never did.
      await queue.close();
      expect(await inFlight).toBe('failed');
    } finally {
      process.kill(redis.server.pid, 'SIGCONT');
    }
  });
});

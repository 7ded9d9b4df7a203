/**
 * The agent's queue closes after Redis is gone (SIGKILL: nothing listens) with a command in
 * flight: its connection waits to reconnect and never emits `end`, so a `close()` that awaited
 * the drop of that connection never settled. Real redis-server of its own (it is killed). The
 * command goes out once the client saw the socket close (its `retryStrategy` is called), not
 * after a sleep.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bullmqPreparationQueue } from '../../src/queue/index.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('queue close at a gone Redis');

describe.runIf(redis.available)('the preparation queue at a gone Redis', () => {
  it('close() settles with a command in flight', { timeout: 30_000 }, async () => {
    let reconnecting: () => void = () => {};
    const lost = new Promise<void>((resolve) => {
      reconnecting = resolve;
    });
    const queue = bullmqPreparationQueue({
      connection: {
        host: '127.0.0.1',
        port: redis.server.port,
        // Called once the client saw its socket close: it then waits a minute to reconnect (no
        // attempt under way when close() drops it: the drop then never ends a socket).
        retryStrategy: () => {
          reconnecting();
          return 60_000;
        },
      },
      name: `q-${randomUUID()}`,
    });
    await queue.counts();
    process.kill(redis.server.pid, 'SIGKILL');
    await lost;
    // A command in flight that nothing will answer (the client holds it until it reconnects).
    const inFlight = queue.counts().then(
      () => 'answered',
      () => 'failed',
    );
    await queue.close();
    expect(await Promise.race([inFlight, Promise.resolve('pending')])).not.toBe('answered');
  });
});

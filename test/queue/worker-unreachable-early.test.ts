/**
 * Issue 46 point 5: a worker pointed at a Redis that refuses connections says so at once,
 * before `bullmq` is even loaded (its import alone takes a second or more on a loaded
 * machine). Here the import never ends, so only a start that does not wait for it can tell.
 * Isolated (vitest.config.ts): the mock must not reach the other queue tests.
 */
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/redis-server.js';

vi.mock('../../src/queue/load-bullmq.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/queue/load-bullmq.js')>();
  return { ...actual, loadBullmq: () => new Promise<never>(() => {}) };
});

const { startPreparationWorker } = await import('../../src/queue/index.js');
const { redisSessionStore } = await import('../../src/storage/redis/index.js');

describe('a worker at an unreachable Redis', () => {
  it('says so while bullmq is still loading', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const store = redisSessionStore({ url });
    const told = new Promise<string>((resolve) => {
      void startPreparationWorker({
        connection: url,
        store,
        name: 'unreachable-early',
        onConnectionError: resolve,
      });
    });
    expect(await told).toMatch(/cannot reach Redis at 127\.0\.0\.1:\d+ .*retrying with backoff/);
    await store.close();
  });
});

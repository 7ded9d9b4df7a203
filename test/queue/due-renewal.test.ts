/**
 * The fleet's schedule hears a session's newer estimate of its trigger only when it moved
 * materially: a steady session's calls (estimates that move by a call's jitter) do not each
 * write to Redis; a session that speeds up does. Real redis-server, the agent's BullMQ queue; the
 * writes are counted from the server's MONITOR feed.
 */

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { bullmqPreparationQueue, type PreparationJob } from '../../src/queue/index.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const testRedis = queueTestRedis('due time renewal tests');
/** Far enough that no worker would start the job during the test (there is none anyway). */
const LATER_MS = 600_000;

/**
 * Scripts run on this test's queue, as the server's MONITOR sees them: only those that name the
 * queue's keys count (a process of another test file that reconnects to a reused port runs
 * scripts of its own here). `settle()` resolves once the monitor has seen everything sent
 * before it (a marker command sent after), so counts are read after events, not after a time.
 */
async function queueScripts(url: string, name: string) {
  const monitor = await new Redis(url).monitor();
  const marks = new Map<string, () => void>();
  let scripts = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    const command = String(args[0]).toLowerCase();
    if (command === 'echo') marks.get(String(args[1]))?.();
    else if (
      (command === 'evalsha' || command === 'eval') &&
      args.some((arg) => String(arg).includes(`:${name}:`))
    )
      scripts++;
  });
  const probe = new Redis(url);
  return {
    async settle(): Promise<number> {
      const mark = randomUUID();
      const seen = new Promise<void>((resolve) => marks.set(mark, resolve));
      await probe.echo(mark);
      await seen;
      marks.delete(mark);
      return scripts;
    },
    close() {
      monitor.disconnect();
      probe.disconnect();
    },
  };
}

describe.runIf(testRedis.available)("the fleet's schedule: renewing a job's due time", () => {
  it('a steady session does not write at every call; an estimate that moves materially does', async () => {
    const name = `q-${randomUUID()}`;
    const queue = bullmqPreparationQueue({ connection: testRedis.server.url, name });
    const redis = new Redis(testRedis.server.url);
    const scripts = await queueScripts(testRedis.server.url, name);
    try {
      const dueAt = Date.now() + LATER_MS;
      const job = {
        sessionId: 's',
        key: 's',
        baseVersion: 2,
        enqueuedAt: Date.now(),
        dueAt,
      } as unknown as PreparationJob;
      await queue.enqueue(job);
      const listed = () => redis.zscore(`bull:${name}:ac-due`, `prep-s-v2`).then(Number);
      expect(await listed()).toBe(dueAt);

      // Twenty calls of a steady session: each estimate within a second of the first.
      const before = await scripts.settle();
      for (let call = 0; call < 20; call++)
        await queue.reschedule(job.key, 2, dueAt + ((call % 5) - 2) * 400);
      expect(await scripts.settle()).toBe(before);
      expect(await listed()).toBe(dueAt);

      // The session sped up: its trigger a minute sooner is written, once.
      await queue.reschedule(job.key, 2, dueAt - 60_000);
      await queue.reschedule(job.key, 2, dueAt - 60_000 + 300);
      expect(await scripts.settle()).toBe(before + 1);
      expect(await listed()).toBe(dueAt - 60_000);
    } finally {
      scripts.close();
      redis.disconnect();
      await queue.close();
    }
  });
});

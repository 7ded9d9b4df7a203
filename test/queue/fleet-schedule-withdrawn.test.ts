/**
 * A withdrawal that meets a held job in a worker's hands (active for the moment of holding it
 * again) still counts: the worker's next pick drops it instead of holding it again, and an
 * agent's new add of the same id lifts the mark. Real redis-server, BullMQ's own client.
 */

import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import type { PreparationJob } from '../../src/core/queues/preparation-queue.js';
import {
  listDue,
  markWithdrawn,
  type RunPlan,
  type ScheduleClient,
  scheduleKeys,
  WorkerSchedule,
} from '../../src/queue/fleet-schedule.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('fleet schedule withdrawal tests');

/** Runs of 100 ms, as the worker plans with them (fleet-schedule.ts). */
const PLAN: RunPlan = { runMs: 100, spreadMs: 100, driftShare: 0.25 };

describe.runIf(redis.available)(
  "the fleet's schedule: a withdrawal marked while a worker holds the job",
  () => {
    it('the next pick drops a withdrawn job; a new add of the same id is scheduled again', async () => {
      const { hostname, port } = new URL(redis.server.url);
      const queue = new Queue(`q-${randomUUID()}`, { connection: { host: hostname, port: Number(port) } });
      try {
        const client = queue.getBackend().client as Promise<ScheduleClient>;
        const keys = scheduleKeys((type) => queue.toKey(type));
        const worker = new WorkerSchedule(client, keys, 'w1', 1);
        await worker.start();
        const dueAt = Date.now() + 600_000;
        const job = { sessionId: 's', key: 's', baseVersion: 3, dueAt } as unknown as PreparationJob;
        await listDue(await client, keys, 'job-1', dueAt);
        // Not withdrawn: held until near its due time.
        expect(await worker.hold('job-1', job, PLAN)).toMatchObject({ until: expect.any(Number), dueAt });
        await markWithdrawn(await client, keys, 'job-1');
        expect(await worker.hold('job-1', job, PLAN)).toBe('withdrawn');
        // The agent adds the same job again (a session reopened under its id): scheduled again.
        await listDue(await client, keys, 'job-1', dueAt);
        expect(await worker.hold('job-1', job, PLAN)).toMatchObject({ until: expect.any(Number), dueAt });
        await worker.stop();
      } finally {
        await queue.close();
      }
    });
  },
);

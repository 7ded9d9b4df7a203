/**
 * Two forks of one session, alternating under one id (review-86e: the forks got 1 of 7
 * summaries from the queue). Each fork resumes its own stored state and versions grow across
 * branches, so the job id, the worker's fence and the published record must name the branch
 * the job extends, not only its version: else the fork that is not the newest one has its job
 * fenced away, its record refused or overwritten, and, at a base both forks extend, its add a
 * no-op under the other fork's id. Real redis-server, the real BullMQ queue, a real worker
 * process (support/queue-worker.ts).
 */

import { describe, expect, it } from 'vitest';
import { chatTurns } from '../support/background-fixtures.js';
import { until } from '../support/until.js';
import { settled } from './support/queue-fleet.js';
import { queueTestRedis } from './support/queue-test-redis.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const redis = queueTestRedis('fork branches queue test');

/** 45 shared turns (past the trigger), then each fork's own 100. */
const shared = chatTurns(45, 100, 's-');
const fork = (tag: string) => [...shared, ...chatTurns(100, 100, tag)];

describe.runIf(redis.available)('forks of one session through the queue', () => {
  it('each fork gets its summaries from the queue, at a base both extend and at its own', async () => {
    const scene = redis.scene('fork-test');
    const { fleet } = scene;
    // The threshold at prepareAtPct, and no pace learned (one instant for every call): the
    // jobs carry no deadline, so a worker runs each one it picks (none expires or is held).
    const live = scene.agent({ preparationLead: 'fixed', clock: () => NOW });
    await fleet.start('w1');
    // Every job added so far has run (published, or fenced): the queue holds none pending.
    const drained = () =>
      until(async () => {
        await settled(live);
        const counts = await live.queue.counts();
        return counts.waiting + counts.active + counts.delayed === 0;
      }, 'the queue has run every job added');

    const branches = { left: fork('l-'), right: fork('r-') };
    const summarizers: { branch: string; summarizer: string }[] = [];
    // The shared part crosses the threshold and triggers: its summary (v1) from the queue.
    await live.manager.compact('s', shared.slice(0, 72));
    await drained();
    const first = await live.manager.compact('s', shared);
    expect(first.summary?.summarizer).toBe('queue:scripted-w1');

    // The forks alternate a turn at a time; each job added runs before the next call.
    for (let turn = 1; turn <= 100; turn++)
      for (const branch of ['left', 'right'] as const) {
        const started = live.manager.backgroundStatus().started;
        const result = await live.manager.compact('s', branches[branch].slice(0, 2 * (45 + turn)));
        if (result.applied) summarizers.push({ branch, summarizer: result.summary?.summarizer ?? 'none' });
        if (live.manager.backgroundStatus().started > started) await drained();
      }
    for (const branch of ['left', 'right'])
      expect(
        summarizers.filter((s) => s.branch === branch).length,
        `the ${branch} fork compacted a few times`,
      ).toBeGreaterThanOrEqual(4);
    expect(summarizers, 'every compaction of either fork swapped in a summary from the queue').toEqual(
      summarizers.map(({ branch }) => ({ branch, summarizer: 'queue:scripted-w1' })),
    );
    expect(live.calls, 'the agent summarized nothing itself').toEqual([]);
  });
});

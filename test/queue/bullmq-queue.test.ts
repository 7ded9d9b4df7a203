/**
 * Summaries prepared on a real BullMQ queue over a real redis-server, by real worker
 * processes (support/queue-worker.ts), for agents whose managers have their own Redis
 * clients: one job per session version however many agents enqueue it, a worker killed
 * mid-job, a Redis restart, a poisoned job, a backlog of superseded jobs.
 */

import { describe, expect, it } from 'vitest';
import type { CompactManagerOptions } from '../../src/core/manager/compact-manager.js';
import {
  bullmqPreparationQueue,
  type PreparationJobOutcome,
  startPreparationWorker,
} from '../../src/queue/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { chatTurns } from '../support/background-fixtures.js';
import { type Agent, settled, type WorkerFleet } from './support/queue-fleet.js';
import { type QueueScene, queueTestRedis } from './support/queue-test-redis.js';

const redis = queueTestRedis('BullMQ preparation queue tests');
const history = chatTurns(200);
/** 36 turns: past prepareAtPct (7,000 of 10,000 tokens), under the trigger. */
const CROSSED = history.slice(0, 72);
/** 45 turns: past the trigger (8,500). */
const TRIGGERED = history.slice(0, 90);
/** The current test's queue and key prefix (`setup`). */
let scene: QueueScene;

/** A fleet and `n` agents on their own queue and key prefix. */

function setup(
  n: number,
  extra: Partial<CompactManagerOptions> = {},
): { fleet: WorkerFleet; agents: Agent[] } {
  scene = redis.scene('queue-test');
  return { fleet: scene.fleet, agents: Array.from({ length: n }, () => scene.agent(extra)) };
}

/** Resolves once `agent` is refused the lock `key` (a claim a worker holds). */
function claimRefused(agent: Agent, key: string): Promise<void> {
  const acquire = agent.store.acquireLock.bind(agent.store);
  return new Promise((resolve) => {
    agent.store.acquireLock = async (id, ttlMs) => {
      const lock = await acquire(id, ttlMs);
      // The session's claim, or its job's fold's (`<key>@<fold>`, a job that names its branch).
      if ((id === key || id.startsWith(`${key}@`)) && !lock) resolve();
      return lock;
    };
  });
}

const summarizing = (f: WorkerFleet, session: string) =>
  f.of('summarizing').filter((r) => r.sessionId === session);

describe.runIf(redis.available)('the BullMQ preparation queue', () => {
  it('dedup: three agents enqueue one version, two workers summarize it once, the trigger swaps it in', async () => {
    const { fleet, agents } = setup(3);
    await Promise.all([fleet.start('w1'), fleet.start('w2')]);
    for (const agent of agents) {
      expect((await agent.manager.compact('s', CROSSED)).applied).toBe(false);
      await settled(agent);
    }
    await fleet.untilCount((r) => r.type === 'job' && r.outcome.sessionId === 's', 1);
    expect(agents.reduce((sum, a) => sum + a.manager.backgroundStatus().queued, 0)).toBe(3);
    const counts = await agents[0]!.queue.counts();
    expect(counts).toMatchObject({ waiting: 0, active: 0, delayed: 0, completed: 1, failed: 0 });
    expect(summarizing(fleet, 's')).toHaveLength(1);
    const [job] = fleet.of('job');
    expect(job?.outcome).toMatchObject({ result: 'published', baseVersion: 0 });

    const result = await agents[2]!.manager.compact('s', TRIGGERED);
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe(`queue:scripted-${job!.worker}`);
    expect(result.summary?.text).toContain(`by ${job!.worker}`);
    expect(agents[2]!.manager.backgroundStatus().used).toBe(1);
    expect(
      agents.flatMap((a) => a.calls),
      'no agent summarized',
    ).toEqual([]);
    // Another agent at the same history answers with that version: applied once.
    const again = await agents[0]!.manager.compact('s', TRIGGERED);
    expect(again.version).toBe(1);
    expect(again.summary?.text).toBe(result.summary?.text);
  });

  it('crash: a worker SIGKILLed mid-job; another runs the stalled job, which is applied once', async () => {
    const { fleet, agents } = setup(2);
    // A lock that outlives a loaded machine's pauses (renewed every half of it), and a second
    // stall allowed: the crash, not a slow renewal, is what this test is about.
    const stall = { STALLED_MS: '500', LOCK_MS: '4000', MAX_STALLED: '2' };
    await fleet.start('hung', { MODE: 'hang', ...stall });
    await agents[0]!.manager.compact('s', CROSSED);
    await settled(agents[0]!);
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.worker === 'hung');
    await fleet.kill('hung');
    await fleet.start('rescuer', stall);
    await fleet.inbox.until((r) => r.type === 'job' && r.worker === 'rescuer');
    // The rescuer published the summary once. On a loaded machine its own lock may lapse
    // after it published and before BullMQ recorded the completion: the job then runs again
    // and finds the summary already prepared, or the job already spent (its messages dropped
    // once its run completed: 'superseded'); that run's outcome is the one recorded.
    const outcomes = fleet.of('job').map((r) => [r.worker, r.outcome.result]);
    expect([
      [['rescuer', 'published']],
      [['rescuer', 'already_prepared']],
      [['rescuer', 'superseded']],
    ]).toContainEqual(outcomes);
    expect(await fleet.status('rescuer')).toMatchObject({ published: 1, summarizerRuns: 1 });
    expect(summarizing(fleet, 's').map((r) => r.worker)).toEqual(['hung', 'rescuer']);

    const first = await agents[1]!.manager.compact('s', TRIGGERED);
    expect(first.applied).toBe(true);
    expect(first.summary?.text).toContain('by rescuer');
    const second = await agents[0]!.manager.compact('s', TRIGGERED);
    expect(second.applied).toBe(false);
    expect(second.version).toBe(1);
    expect(agents.reduce((sum, a) => sum + a.manager.backgroundStatus().used, 0)).toBe(1);
  });

  it('poison: an always-failing summarizer is retried with backoff, dead-lettered with one warning; the agent compacts itself', async () => {
    const { fleet, agents } = setup(1);
    await fleet.start('poisoned', { MODE: 'fail' });
    await agents[0]!.manager.compact('s', CROSSED);
    await settled(agents[0]!);
    await fleet.inbox.until((r) => r.type === 'event' && r.code === 'preparation_dead_lettered');
    const runs = fleet.of('job').filter((r) => r.outcome.sessionId === 's');
    expect(runs.map((r) => r.outcome.result)).toEqual(['failed', 'failed', 'failed']);
    expect(runs.map((r) => r.outcome.deadLettered === true)).toEqual([false, false, true]);
    expect(fleet.of('event').filter((r) => r.code === 'preparation_dead_lettered')).toHaveLength(1);
    expect(await agents[0]!.queue.counts()).toMatchObject({ failed: 1, waiting: 0, active: 0, delayed: 0 });

    const result = await agents[0]!.manager.compact('s', TRIGGERED);
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('agent-summarizer');
    expect(agents[0]!.calls).toEqual(['s']);
  });

  it('backlog and supersede: stale jobs are withdrawn by their agent or dropped unsummarized by the worker; the fresh one is prepared', async () => {
    const { fleet, agents } = setup(2);
    const [a, b] = agents as [Agent, Agent];
    // No worker yet: the jobs wait while their sessions move on (an agent compacts itself).
    // old-1 and old-2 reach their trigger on the agent that enqueued them: it withdraws the
    // waiting job; old-3 and old-4 on the other agent (behind a load balancer): the job stays.
    for (const [session, trigger] of [
      ['old-1', a],
      ['old-2', a],
      ['old-3', b],
      ['old-4', b],
    ] as const) {
      await a.manager.compact(session, CROSSED);
      await settled(a);
      expect((await trigger.manager.compact(session, TRIGGERED)).applied).toBe(true);
    }
    await a.manager.compact('fresh', CROSSED);
    await settled(a);
    // The withdrawals are not awaited by the trigger: until the queue shows them.
    while ((await a.queue.counts()).waiting !== 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await fleet.start('w1');
    await fleet.untilCount((r) => r.type === 'job', 3);
    const results = Object.fromEntries(fleet.of('job').map((r) => [r.outcome.sessionId, r.outcome.result]));
    expect(results).toEqual({ 'old-3': 'superseded', 'old-4': 'superseded', fresh: 'published' });
    const summarized = Object.fromEntries(
      fleet.of('job').map((r) => [r.outcome.sessionId, r.outcome.summarized]),
    );
    expect(summarized).toEqual({ 'old-3': false, 'old-4': false, fresh: true });
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['fresh']);
    expect(await fleet.status('w1')).toMatchObject({ summarizerRuns: 1, superseded: 2, published: 1 });
    const result = await a.manager.compact('fresh', TRIGGERED);
    expect(result.summary?.summarizer).toBe('queue:scripted-w1');
  });

  it('closed session: endSession({ closed: true }) withdraws its waiting job, a plain endSession keeps it for another process', async () => {
    const { fleet, agents } = setup(1);
    const agent = agents[0]!;
    // No worker yet: both jobs wait.
    for (const session of ['kept', 'closed']) {
      await agent.manager.compact(session, CROSSED);
      await settled(agent);
    }
    expect((await agent.queue.counts()).waiting).toBe(2);
    agent.manager.endSession('kept');
    agent.manager.endSession('closed', { closed: true });
    // The withdrawal is not awaited by endSession: until the queue shows it.
    while ((await agent.queue.counts()).waiting !== 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await fleet.start('w1');
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'kept');
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['kept']);
    expect(await agent.store.get('closed::prepared')).toBeUndefined();
    // Another process serving 'kept' still swaps the summary in at its trigger.
    const result = await agent.manager.compact('kept', TRIGGERED);
    expect(result.summary?.summarizer).toBe('queue:scripted-w1');
  });

  it('closed session while its add is on the way: the job is withdrawn once the add lands', async () => {
    const { fleet, agents } = setup(1);
    const agent = agents[0]!;
    const enqueue = agent.queue.enqueue.bind(agent.queue);
    let adding!: () => void;
    const addStarted = new Promise<void>((resolve) => {
      adding = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    agent.queue.enqueue = async (job) => {
      adding();
      await gate;
      await enqueue(job);
    };
    await agent.manager.compact('racing', CROSSED);
    await addStarted;
    agent.manager.endSession('racing', { closed: true });
    release();
    await settled(agent);
    expect(agent.manager.backgroundStatus().queued).toBe(1);
    // The add landed, then the withdrawal (not awaited): the job leaves the queue.
    while ((await agent.queue.counts()).waiting !== 0)
      await new Promise((resolve) => setTimeout(resolve, 20));
    agent.queue.enqueue = enqueue;
    // A job enqueued after it is the worker's first (FIFO): the withdrawn one never ran.
    await agent.manager.compact('after', CROSSED);
    await settled(agent);
    await fleet.start('w1');
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'after');
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['after']);
    expect(await agent.store.get('racing::prepared')).toBeUndefined();
  });

  it('deadline: a job that could not be published before its trigger is dropped by the worker without a summarizer call', async () => {
    const { fleet, agents } = setup(1);
    const agent = agents[0]!;
    // The worker learns how long a run takes (300 ms) on a first job.
    await fleet.start('w1', { SUMMARIZE_MS: '300' });
    await agent.manager.compact('warm', CROSSED);
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'warm');
    // A session at a pace of one call per millisecond (its clock): its trigger is a few
    // milliseconds after the job is enqueued, sooner than any run of this worker.
    let now = Date.now();
    const fast = scene.agent({ clock: () => ++now });
    for (const turns of [30, 32, 34, 36]) {
      await fast.manager.compact('due', history.slice(0, 2 * turns));
      await settled(fast);
    }
    expect(fast.manager.backgroundStatus().queued).toBe(1);
    const outcome = await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'due');
    expect(outcome).toMatchObject({ outcome: { result: 'expired' } });
    expect(fleet.of('summarizing').map((r) => r.sessionId)).toEqual(['warm']);
    expect(await fleet.status('w1')).toMatchObject({ expired: 1, published: 1, summarizerRuns: 1 });
    expect(await agent.store.get('due::prepared')).toBeUndefined();
    // The agent compacts at its trigger, as without a queue.
    const result = await fast.manager.compact('due', TRIGGERED);
    expect(result.summary?.summarizer).toBe('agent-summarizer');
  });

  it('running at the trigger: the worker summarizing the version is awaited and its summary used; the agent does not summarize', async () => {
    const { fleet, agents } = setup(1);
    const agent = agents[0]!;
    const gated = await fleet.start('gated', { MODE: 'gate' });
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.worker === 'gated');
    // The worker holds the session's preparation claim: the trigger finds it held and waits.
    const refused = claimRefused(agent, 's::prepared');
    const compaction = agent.manager.compact('s', TRIGGERED);
    await refused;
    gated.send({ type: 'release' });
    const result = await compaction;
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('queue:scripted-gated');
    expect(agent.calls, 'the agent did not summarize').toEqual([]);
    await fleet.inbox.until((r) => r.type === 'job');
    expect(fleet.of('job').map((r) => r.outcome.result)).toEqual(['published']);
    expect(agent.manager.backgroundStatus().used).toBe(1);
  });

  it('claimed at the trigger: a job picked while the agent compacts that version itself is dropped unsummarized', async () => {
    const { fleet, agents } = setup(1);
    const enqueuer = agents[0]!;
    // The job waits (no worker); the trigger is served by another process, whose summarizer
    // is held while a worker starts: the version is the agent's, the job is not summarized.
    await enqueuer.manager.compact('s', CROSSED);
    await settled(enqueuer);
    let summarizing!: () => void;
    const inSummarizer = new Promise<void>((resolve) => {
      summarizing = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = scene.agent({
      // Held for as long as the worker takes to start on a loaded machine.
      summarizerTimeoutMs: 600_000,
      summarizer: {
        name: 'held-summarizer',
        summarize: async () => {
          summarizing();
          await gate;
          return { text: '## Task\n- by the held agent' };
        },
      },
    });
    const compaction = held.manager.compact('s', TRIGGERED);
    await inSummarizer;
    await fleet.start('w1');
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 's');
    release();
    const result = await compaction;
    expect(result.summary?.summarizer).toBe('held-summarizer');
    expect(fleet.of('job').map((r) => [r.outcome.result, r.outcome.summarized])).toEqual([
      ['superseded', false],
    ]);
    expect(fleet.of('summarizing')).toEqual([]);
    expect(await held.store.get('s::prepared')).toBeUndefined();
  });

  it('supersede mid-job: a worker slower than the wait at the trigger; its summary is not published', async () => {
    // The trigger waits at most the summarizer's time limit (1 s here) for a running job.
    const { fleet, agents } = setup(1, { summarizerTimeoutMs: 1_000 });
    const agent = agents[0]!;
    const gated = await fleet.start('gated', { MODE: 'gate' });
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'summarizing' && r.worker === 'gated');
    const result = await agent.manager.compact('s', TRIGGERED);
    expect(result.summary?.summarizer).toBe('agent-summarizer');
    gated.send({ type: 'release' });
    await fleet.inbox.until((r) => r.type === 'job');
    expect(fleet.of('job').map((r) => r.outcome.result)).toEqual(['superseded']);
    // The run's summarizer call was spent for nothing (the bench counts these as late).
    expect(fleet.of('job')[0]?.outcome.summarized).toBe(true);
    expect(await agent.store.get('s::prepared')).toBeUndefined();
    expect((await agent.store.get('s'))?.summary?.summarizer).toBe('agent-summarizer');
  });

  it('in process: a worker started beside the agent prepares, counts and reports through its events', async () => {
    const { agents } = setup(1);
    const agent = agents[0]!;
    const store = redisSessionStore({ url: redis.server.url, keyPrefix: scene.keyPrefix });
    const outcomes: string[] = [];
    const worker = await startPreparationWorker({
      connection: redis.server.url,
      store,
      name: agent.queue.name,
      concurrency: 2,
      rateLimit: { max: 10, durationMs: 1000 },
      summarizer: {
        name: 'in-process',
        summarize: async (request) => ({ text: `## Task\n- ${request.messages.length} messages` }),
      },
      onJobDone: (outcome) => outcomes.push(outcome.result),
    });
    // No published run yet: no margins learned.
    expect(worker.status().margins).toBeUndefined();
    const created = new Promise((resolve) => worker.on('compact.summary_created', resolve));
    await agent.manager.compact('s', CROSSED);
    await settled(agent);
    await created;
    while (outcomes.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(outcomes).toEqual(['published']);
    expect(worker.status()).toMatchObject({ published: 1, processed: 1, summarizerRuns: 1, running: 0 });
    // The margins its schedule plans with: one run timed, no due-time sample yet (the default share).
    const margins = worker.status().margins;
    expect(margins).toMatchObject({ dueDriftShare: 0.25, dueDriftSamples: 0 });
    expect(margins!.runP90Ms).toBeGreaterThanOrEqual(margins!.runMedianMs);
    // The margin for a run's own time is the runs' spread (p90 over the median), at least 100 ms.
    expect(margins!.runMarginMs).toBeGreaterThanOrEqual(
      Math.max(100, margins!.runP90Ms - margins!.runMedianMs),
    );
    const result = await agent.manager.compact('s', TRIGGERED);
    expect(result.summary?.summarizer).toBe('queue:in-process');
    await worker.close();
    await store.close();
    await expect(
      startPreparationWorker({ connection: redis.server.url, store, concurrency: 0 }),
    ).rejects.toMatchObject({ code: 'invalid_config', issues: [{ path: ['concurrency'] }] });
    expect(() => bullmqPreparationQueue({ connection: 'http://x', name: 'q' })).toThrow(/redis:\/\//);
  });

  it('restart: after Redis restarts, the running worker and the agent reconnect and prepare again', async () => {
    const { fleet, agents } = setup(1);
    const agent = agents[0]!;
    await fleet.start('w1');
    await agent.manager.compact('before', CROSSED);
    await settled(agent);
    await fleet.inbox.until((r) => r.type === 'job' && r.outcome.sessionId === 'before');

    await redis.restart();
    // The agent's store client reconnects (its commands wait meanwhile); the manager's calls
    // made before that would run through the store's outage mode, as without a queue.
    for (;;) {
      if (
        await agent.store.get('probe').then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The restarted server is empty (no persistence): a new session's job goes through.
    await agent.manager.compact('after', CROSSED);
    await settled(agent);
    expect(agent.manager.backgroundStatus().queued).toBe(2);
    // An attempt that met the worker's own reconnection may fail and is retried with backoff
    // (the queue's attempts): what counts is that the job ends published, not dead-lettered.
    const ended = (r: { type: string; outcome?: PreparationJobOutcome }) =>
      r.type === 'job' &&
      r.outcome?.sessionId === 'after' &&
      (r.outcome.result !== 'failed' || r.outcome.deadLettered === true);
    await fleet.inbox.until(ended);
    expect(fleet.of('job').find(ended)?.outcome.result).toBe('published');
    const result = await agent.manager.compact('after', TRIGGERED);
    expect(result.summary?.summarizer).toBe('queue:scripted-w1');
  });
});

/**
 * The preparation queue contract without BullMQ: a queue of this file's own (an array) behind
 * the manager's `preparationQueue`, and core's `runPreparationJob` as the worker, over the
 * in-process store. The job leaves the process redacted; the trigger never waits on a
 * queue that does not answer; the worker's fence drops superseded and already-published versions.
 */

import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns } from '../../../test/support/background-fixtures.js';
import { expandTemplates } from '../../../test/support/secret-templates.js';
import type { CompactEventName } from '../events/events.js';
import { CompactManager } from '../manager/compact-manager.js';
import type { PreparationJob, PreparationQueue } from '../queues/preparation-queue.js';
import { MemorySessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import { SummaryMarks } from '../summary/summary-mark.js';
import { runPreparationJob } from './run-preparation-job.js';

/** A queue that keeps its jobs (one per id, as BullMQ does) until `take`n. */
class ArrayQueue implements PreparationQueue {
  readonly name = 'array';
  readonly jobs = new Map<string, PreparationJob>();
  readonly withdrawn: string[] = [];
  async enqueue(job: PreparationJob): Promise<void> {
    const id = `${job.key}|${job.baseVersion}`;
    if (!this.jobs.has(id)) this.jobs.set(id, structuredClone(job));
  }
  async withdraw(key: string, baseVersion: number): Promise<void> {
    const id = `${key}|${baseVersion}`;
    if (this.jobs.delete(id)) this.withdrawn.push(id);
  }
}

const worker: Summarizer = {
  name: 'worker',
  summarize: async (request) => ({ text: `## Task\n- worker folded ${request.messages.length} messages` }),
};

function deps(store: MemorySessionStore, chain: Summarizer[] = [worker]) {
  const events: CompactEventName[] = [];
  return {
    events,
    deps: {
      store,
      chain,
      counter: charCounter,
      timeoutMs: 5_000,
      redact: undefined,
      marks: new SummaryMarks(),
      emit: (name: CompactEventName) => {
        events.push(name);
      },
    },
  };
}

function manager(store: MemorySessionStore, queue: PreparationQueue, clock?: () => number) {
  return new CompactManager({
    ...(clock ? { clock } : {}),
    maxContextTokens: 10_000,
    tokenCounter: charCounter,
    policy: { hardCapBuffer: 500 },
    store,
    preparationQueue: queue,
    summarizer: { name: 'agent', summarize: async () => ({ text: '## Task\n- by the agent' }) },
  });
}

async function settled(m: CompactManager): Promise<void> {
  while (m.backgroundStatus().running > 0) await new Promise((resolve) => setImmediate(resolve));
}

describe('a preparation queue (the contract)', () => {
  it('enqueues one redacted job per version; a worker publishes it; the trigger swaps it in', async () => {
    const [secretLine, secret] = expandTemplates(
      'queue-job',
      'deploy with OPENAI_API_KEY=sk-proj-⟨key:ALNUM:48⟩ please',
      '⟨key⟩',
    );
    const history = chatTurns(60);
    history[2] = { role: 'user', content: secretLine };
    const store = new MemorySessionStore();
    const queue = new ArrayQueue();
    const m = manager(store, queue);
    for (const turns of [36, 37, 38]) {
      await m.compact('s', history.slice(0, 2 * turns));
      await settled(m);
    }
    expect(queue.jobs.size).toBe(1);
    const [job] = queue.jobs.values();
    expect(job!.baseVersion).toBe(0);
    expect(JSON.stringify(job)).not.toContain(secret!.slice(8, 24));
    expect(JSON.stringify(job)).toContain('deploy with OPENAI_API_KEY=');

    const { deps: d } = deps(store);
    expect(await runPreparationJob(job!, d)).toBe('published');
    expect(await runPreparationJob(job!, d), 'a second run of the job').toBe('already_prepared');
    const result = await m.compact('s', history.slice(0, 90));
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('queue:worker');
    expect(m.backgroundStatus()).toMatchObject({ queued: 1, used: 1, summarized: 0 });
    // The next version moved on: the old job is superseded, before and after summarizing.
    expect(await runPreparationJob(job!, d)).toBe('superseded');
    await m.shutdown();
  });

  it("a job carries the deadline of its session's trigger; a worker that cannot publish before it drops the job without a summarizer call", async () => {
    const store = new MemorySessionStore();
    const queue = new ArrayQueue();
    // A call every 2 s (the session's pace): the deadline is the calls left before the trigger.
    let now = 1_000_000;
    const m = manager(store, queue, () => now);
    const history = chatTurns(60);
    for (let turns = 30; turns <= 38 && queue.jobs.size === 0; turns++) {
      now += 2_000;
      await m.compact('s', history.slice(0, 2 * turns));
      await settled(m);
    }
    const [job] = queue.jobs.values();
    expect(job?.deadline).toBeDefined();
    // At least one call of 2 s away, at most the window's growth away.
    expect(job!.deadline! - job!.enqueuedAt).toBeGreaterThanOrEqual(2_000);
    let calls = 0;
    const counted: Summarizer = {
      ...worker,
      summarize: (request) => {
        calls++;
        return worker.summarize(request);
      },
    };
    const { deps: d } = deps(store, [counted]);
    const late = { ...d, expectedMs: () => job!.deadline! - Date.now() + 60_000 };
    expect(await runPreparationJob(job!, late)).toBe('expired');
    expect(calls, 'no summarizer call for an expired job').toBe(0);
    expect(await store.get('s::prepared')).toBeUndefined();
    // A worker fast enough (or one that measured nothing yet) runs it.
    expect(await runPreparationJob(job!, { ...d, expectedMs: () => 10 })).toBe('published');
    expect(calls).toBe(1);
    await m.shutdown();
  });

  it('the trigger withdraws its waiting job when it compacts without it; a job of a live version is never withdrawn', async () => {
    const store = new MemorySessionStore();
    const queue = new ArrayQueue();
    const m = manager(store, queue);
    const history = chatTurns(60);
    await m.compact('s', history.slice(0, 72));
    await settled(m);
    expect(queue.jobs.size).toBe(1);
    // Shutdown and endSession keep it: another process may still use its summary.
    m.endSession('s');
    expect(queue.withdrawn).toEqual([]);
    await m.compact('s', history.slice(0, 72));
    await settled(m);
    // No worker ran it: the trigger compacts itself and takes the job back.
    const result = await m.compact('s', history.slice(0, 90));
    expect(result.summary?.summarizer).toBe('agent');
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.withdrawn).toEqual(['s|0']);
    await m.shutdown();
    expect(queue.withdrawn).toEqual(['s|0']);
  });

  it('a closed session and a reset take their waiting job back; an unsettled add is taken back once it lands', async () => {
    const store = new MemorySessionStore();
    const queue = new ArrayQueue();
    const m = manager(store, queue);
    const crossed = chatTurns(60).slice(0, 72);
    for (const session of ['closed', 'reset']) {
      await m.compact(session, crossed);
      await settled(m);
    }
    expect([...queue.jobs.keys()]).toEqual(['closed|0', 'reset|0']);
    m.endSession('closed', { closed: true });
    await m.reset('reset');
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.withdrawn).toEqual(['closed|0', 'reset|0']);
    // Closed before its preparation started: nothing is added at all.
    await m.compact('early', crossed);
    m.endSession('early', { closed: true });
    await settled(m);
    expect(queue.jobs.size).toBe(0);
    expect(m.backgroundStatus().queued).toBe(2);
    await m.shutdown();
  });

  it('the trigger never waits on a queue that does not answer', async () => {
    const stuck: PreparationQueue = { name: 'stuck', enqueue: () => new Promise(() => {}) };
    const m = manager(new MemorySessionStore(), stuck);
    const history = chatTurns(60);
    await m.compact('s', history.slice(0, 72));
    const result = await m.compact('s', history.slice(0, 90));
    expect(result.applied).toBe(true);
    expect(result.summary?.summarizer).toBe('agent');
  });

  it('a job whose chain fails throws (the queue retries it) and publishes nothing', async () => {
    const store = new MemorySessionStore();
    const queue = new ArrayQueue();
    const m = manager(store, queue);
    await m.compact('s', chatTurns(60).slice(0, 72));
    await settled(m);
    const failing: Summarizer = {
      name: 'down',
      summarize: async () => {
        throw new Error('provider down');
      },
    };
    const { deps: d, events } = deps(store, [failing]);
    await expect(runPreparationJob([...queue.jobs.values()][0]!, d)).rejects.toMatchObject({
      code: 'summarizer_failed',
    });
    expect(events).toEqual(['compact.error']);
    expect(await store.get('s::prepared')).toBeUndefined();
    await m.shutdown();
  });

  it("a queued job says whether an AI assistant is on the other side, and the worker's summarizer is told", async () => {
    const heard: (boolean | undefined)[] = [];
    const listening: Summarizer = {
      ...worker,
      summarize: (request) => {
        heard.push(request.withAssistant);
        return worker.summarize(request);
      },
    };
    const jobs: PreparationJob[] = [];
    for (const withPrompt of [true, false]) {
      const store = new MemorySessionStore();
      const queue = new ArrayQueue();
      const m = manager(store, queue);
      // The system prompt is pinned, never folded: only the request shows the assistant.
      const history = [
        ...(withPrompt ? [{ role: 'system', content: 'You are a travel booking assistant.' }] : []),
        ...chatTurns(60),
      ];
      await m.compact('s', history.slice(0, 72));
      await settled(m);
      const [job] = queue.jobs.values();
      expect(job, `a job (system prompt: ${withPrompt})`).toBeDefined();
      expect(job!.messages.some((message) => message.role === 'system')).toBe(false);
      jobs.push(job!);
      expect(await runPreparationJob(job!, deps(store, [listening]).deps)).toBe('published');
      await m.shutdown();
    }
    expect(jobs.map((job) => job.withAssistant === true)).toEqual([true, false]);
    expect(heard.map((told) => told === true)).toEqual([true, false]);
  });
});

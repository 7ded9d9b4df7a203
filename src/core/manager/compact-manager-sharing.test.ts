/**
 * One session served by many callers: single flight (one summarization per trigger, one
 * version for every caller, versions only up), pins that survive a concurrent compaction,
 * and per-agent compactors sharing one history.
 */
import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns, GatedSummarizer } from '../../../test/support/background-fixtures.js';
import { MemorySessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';
import { CompactManager, type CompactManagerOptions } from './compact-manager.js';

function mk(summarizer: Summarizer, extra: Partial<CompactManagerOptions> = {}): CompactManager {
  return new CompactManager({
    maxContextTokens: 10_000,
    tokenCounter: charCounter,
    summarizer,
    // Preparation and swap at the trigger (the cost trigger would compact before prepareAtPct).
    policy: { hardCapBuffer: 500, costTrigger: false },
    ...extra,
  });
}

/** Resolves once `check` holds, polling on the event loop, however long that takes (the test's timeout bounds a hang). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe('single flight', () => {
  it.each([false, true])(
    '50 concurrent preflights of one session start one summarization (background: %s)',
    async (background) => {
      const summarizer = new GatedSummarizer();
      const manager = mk(summarizer, { background });
      const history = chatTurns(45);
      const calls = Array.from({ length: 50 }, () => manager.compact('s', history));
      await summarizer.requested();
      summarizer.release();
      const results = await Promise.all(calls);
      expect(summarizer.requests).toHaveLength(1);
      expect(results.filter((r) => r.applied)).toHaveLength(1);
      expect(new Set(results.map((r) => r.version))).toEqual(new Set([1]));
      expect(new Set(results.map((r) => r.summary?.text))).toHaveProperty('size', 1);
      expect(new Set(results.map((r) => JSON.stringify(r.messages)))).toHaveProperty('size', 1);
    },
  );

  it('50 concurrent preflights over 5 managers sharing a locked store summarize once per trigger; versions only go up', async () => {
    const store = new MemorySessionStore();
    const summarizer = new GatedSummarizer('shared', true);
    const managers = Array.from({ length: 5 }, () =>
      mk(summarizer, { store, sessionLock: { ttlMs: 5_000 } }),
    );
    const history = chatTurns(200);
    const seen: number[] = [];
    let last = 0;
    for (const turns of [45, 85, 125, 165]) {
      const calls = Array.from({ length: 50 }, (_, k) =>
        managers[k % 5]!.compact('s', history.slice(0, 2 * turns)),
      );
      const results = await Promise.all(calls);
      const versions = new Set(results.map((r) => r.version));
      expect(versions.size, `turns ${turns}: every caller gets the same version`).toBe(1);
      const version = [...versions][0]!;
      expect(version).toBe(last + 1);
      expect(results.filter((r) => r.applied)).toHaveLength(1);
      expect(new Set(results.map((r) => r.summary?.text)).size).toBe(1);
      seen.push(version);
      last = version;
    }
    expect(summarizer.requests).toHaveLength(4);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect((await store.get('s'))!.version).toBe(4);
  });
});

describe('background preparation shared through the store', () => {
  it('5 managers over one locked store prepare once per trigger and every trigger swaps it in', async () => {
    const store = new MemorySessionStore();
    let calls = 0;
    const summarizer: Summarizer = {
      name: 'llm',
      summarize: async (request) => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { text: `summary ${calls}: ${request.messages.length} messages` };
      },
    };
    const managers = Array.from({ length: 5 }, () =>
      mk(summarizer, { store, sessionLock: { ttlMs: 5_000 }, background: true }),
    );
    const history = chatTurns(200);
    let version = 0;
    for (let turns = 30; turns <= 200; turns++) {
      const results = await Promise.all(managers.map((m) => m.compact('s', history.slice(0, 2 * turns))));
      expect(new Set(results.map((r) => r.version)).size, `turn ${turns}`).toBe(1);
      const next = results[0]!.version;
      expect(next - version).toBeLessThanOrEqual(1);
      if (next > version) expect(results.filter((r) => r.applied)).toHaveLength(1);
      version = next;
      // The model call: the preparation started at this turn finishes before the next one.
      await until(() => managers.every((m) => m.backgroundStatus().running === 0));
    }
    const statuses = managers.map((m) => m.backgroundStatus());
    const used = statuses.reduce((sum, s) => sum + s.used, 0);
    expect(version).toBeGreaterThanOrEqual(4);
    // One summarization per trigger; the last may be the next version's preparation, in flight.
    expect(calls, 'one summarization per trigger across the managers').toBeGreaterThanOrEqual(version);
    expect(calls, 'one summarization per trigger across the managers').toBeLessThanOrEqual(version + 1);
    expect(used, 'every trigger swapped a prepared summary in').toBe(version);
    await Promise.all(managers.map((m) => m.shutdown()));
  });
});

describe('pins remembered during a compaction', () => {
  const secret = {
    role: 'user',
    content: 'Remember: the deploy key lives in vault/prod.',
    meta: { protected: true },
  };

  it('a compaction that read the state before the pins were written keeps them (no lock)', async () => {
    const store = new MemorySessionStore();
    const slow = new GatedSummarizer();
    const compactor = mk(slow, { store });
    const other = mk(new GatedSummarizer('other', true), { store });
    const history = chatTurns(45);
    const pending = compactor.compact('s', history);
    await slow.requested();
    await other.preflight('s', [...history.slice(0, 10), secret]);
    const pinned = (await store.get('s'))!.pinnedIds ?? [];
    expect(pinned).toHaveLength(1);
    slow.release();
    const result = await pending;
    expect(result.version).toBe(1);
    expect((await store.get('s'))!.pinnedIds).toEqual(expect.arrayContaining(pinned));
  });

  it('under the session lock the pins wait for the compaction, then land', async () => {
    const store = new MemorySessionStore();
    const slow = new GatedSummarizer();
    const compactor = mk(slow, { store, sessionLock: true });
    const other = mk(new GatedSummarizer('other', true), { store, sessionLock: true });
    const history = chatTurns(45);
    const pending = compactor.compact('s', history);
    await slow.requested();
    const withSecret = [...history.slice(0, 10), secret];
    await other.preflight('s', withSecret);
    expect((await store.get('s'))?.pinnedIds ?? []).toHaveLength(0);
    slow.release();
    await pending;
    await other.preflight('s', withSecret);
    const state = (await store.get('s'))!;
    expect(state.version).toBe(1);
    expect(state.pinnedIds).toHaveLength(1);
  });
});

describe('per-agent compactors sharing one history', () => {
  it('each registered agent has its own summarizer, policy, state and summary', async () => {
    const planner = new GatedSummarizer('planner', true);
    const coder = new GatedSummarizer('coder', true);
    const shared = new GatedSummarizer('shared', true);
    const manager = mk(shared, {
      agents: {
        planner: { summarizer: planner },
        coder: { summarizer: coder, policy: { keepRecentTurns: 2, targetPct: 0.3 } },
      },
    });
    const history = chatTurns(45);
    const plan = await manager.compact('s', history, { agent: 'planner' });
    const code = await manager.compact('s', history, { agent: 'coder' });
    expect(plan.summary?.summarizer).toBe('planner');
    expect(code.summary?.summarizer).toBe('coder');
    expect([plan.version, code.version]).toEqual([1, 1]);
    expect(code.messages.length).toBeLessThan(plan.messages.length);
    expect(planner.requests.map((r) => r.agent)).toEqual(['planner']);
    expect(coder.requests.map((r) => r.agent)).toEqual(['coder']);
    expect(shared.requests).toHaveLength(0);
    expect((await manager.state('s', 'planner'))!.summary!.summarizer).toBe('planner');
    expect((await manager.state('s', 'coder'))!.summary!.summarizer).toBe('coder');
    expect(await manager.state('s')).toBeUndefined();
    // An unregistered agent shares the session's state; its name reaches the summarizer.
    const other = await manager.compact('s', history, { agent: 'reviewer' });
    expect(other.summary?.summarizer).toBe('shared');
    expect(shared.requests[0]!.agent).toBe('reviewer');
    expect((await manager.state('s'))!.version).toBe(1);
    // Each view goes on from its own summary.
    const more = chatTurns(90);
    const plan2 = await manager.compact('s', more, { agent: 'planner' });
    expect(plan2.version).toBe(2);
    expect((await manager.state('s', 'coder'))!.version).toBe(1);
    await manager.reset('s');
    expect(await manager.state('s', 'planner')).toBeUndefined();
  });

  it('background preparation runs per agent', async () => {
    const planner = new GatedSummarizer('planner', true);
    const coder = new GatedSummarizer('coder', true);
    const manager = mk(planner, { background: true, agents: { coder: { summarizer: coder } } });
    const history = chatTurns(50);
    for (const agent of [undefined, 'coder'])
      await manager.preflight('s', history.slice(0, 72), agent ? { agent } : {});
    await Promise.all([planner.requested(), coder.requested()]);
    expect(manager.backgroundStatus().started).toBe(2);
    expect([planner.requests.length, coder.requests.length]).toEqual([1, 1]);
  });

  it('names the agent of a bad policy', () => {
    expect(() => mk(new GatedSummarizer(), { agents: { coder: { policy: { triggerPct: 2 } } } })).toThrow(
      /triggerPct/,
    );
  });
});

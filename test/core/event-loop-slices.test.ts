/**
 * Issue 38 point 1: a long piece of work gives the event loop turns. The first call of a long
 * history (index, count, view) and a triggered compaction (the cascade's levels) work in
 * slices; a warm call of a few new messages does not pause at all; and slicing changes no
 * result, even when other sessions' calls run in the pauses. Turns of the loop are counted
 * with setImmediate ticks while a call runs: no timing is asserted.
 */
import { describe, expect, it, vi } from 'vitest';
import { clock } from '../../src/core/clock.js';
import { isLargeState } from '../../src/core/session/json-copy.js';
import { CompactManager, MemorySessionStore } from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { hasOpenToolCalls } from '../support/open-tool-calls.js';

/** Counts turns of the event loop (setImmediate ticks) from `start()` until `stop()`. */
function loopTurns() {
  let count = 0;
  let ticking = true;
  const tick = () => {
    if (!ticking) return;
    count++;
    setImmediate(tick);
  };
  return {
    start: () => setImmediate(tick),
    stop: () => {
      ticking = false;
    },
    get count() {
      return count;
    },
  };
}

/** Turns of the event loop while `work` runs, and its result. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  const turns = loopTurns();
  turns.start();
  try {
    return { value: await work(), turns: turns.count };
  } finally {
    turns.stop();
  }
}

/** A coding session of about `messages` messages, cut where no tool call is left open. */
function session(messages: number, resultChars = 1_200): Record<string, unknown>[] {
  const history = syntheticSession({ turns: Math.ceil(messages / 7), seed: 11, resultChars });
  let end = Math.min(messages, history.length);
  while (end > 0 && hasOpenToolCalls(history.slice(0, end))) end--;
  return history.slice(0, end) as Record<string, unknown>[];
}

/** A window the whole history fits in: the call only indexes and counts. */
const HUGE_WINDOW = 50_000_000;

/**
 * Serves `long` but its last 30 messages (stored, then warm), then compacts the whole of it in
 * a window just over the served part; `started` runs right before that compaction.
 */
async function compactLongSession(manager: CompactManager, long: unknown[], started: () => void) {
  await manager.ready();
  let end = long.length - 30;
  while (hasOpenToolCalls(long.slice(0, end))) end--;
  await manager.compact('long', long.slice(0, end), { policy: { costTrigger: false } });
  await manager.flush();
  const first = await manager.compact('long', long.slice(0, end), { policy: { costTrigger: false } });
  started();
  return manager.compact('long', long, {
    maxContextTokens: Math.ceil(first.tokensBefore * 1.1),
    policy: { cacheAware: true, costTrigger: false },
  });
}

describe('long work in slices (issue 38 point 1)', () => {
  const history = session(2_400);

  it('the first call of a long history gives the loop turns while it indexes and counts', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW });
    await manager.ready();
    const { value, turns } = await turnsDuring(() => manager.compact('cold', history));
    expect(value.applied).toBe(false);
    expect(value.tokensBefore).toBeGreaterThan(200_000);
    // One block before (0 turns): 2,400 messages and ~350k tokens take far more than one slice.
    expect(turns).toBeGreaterThan(2);
    await manager.shutdown();
  });

  it('a warm call of a few new messages does not pause', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW });
    await manager.ready();
    let end = history.length - 40;
    while (hasOpenToolCalls(history.slice(0, end))) end--;
    await manager.compact('warm', history.slice(0, end));
    // The exact count the first call left for after it (it decided from a bound).
    await manager.flush();
    const { turns } = await turnsDuring(() => manager.compact('warm', history));
    expect(turns).toBe(0);
    await manager.shutdown();
  });

  it('a triggered compaction gives the loop turns while the cascade clears tool results', async () => {
    // Tool results hold most tokens: clearing them (all but the newest, cache-aware) reaches
    // the target, so no summarizer runs; before, the level ran in one block (0 turns).
    const long = session(3_000, 2_000);
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW });
    await manager.ready();
    let end = long.length - 30;
    while (hasOpenToolCalls(long.slice(0, end))) end--;
    await manager.compact('hot', long.slice(0, end));
    // The first call decided from a bound and counted exactly after it: the exact count.
    await manager.flush();
    const first = await manager.compact('hot', long.slice(0, end));
    const window = Math.ceil(first.tokensBefore * 1.1);
    const { value, turns } = await turnsDuring(() =>
      manager.compact('hot', long, {
        maxContextTokens: window,
        policy: { cacheAware: true },
      }),
    );
    expect(value.applied).toBe(true);
    expect(value.levels.map((level) => level.level)).toEqual(['clear_tool_results']);
    expect(value.levels[0]!.count).toBeGreaterThan(500);
    expect(turns).toBeGreaterThan(2);
    await manager.shutdown();
  });

  it('a compaction of a long view gives the loop turns after writing its state (issue 47 point 2)', async () => {
    // The steps after the cascade (state, write, result, guard, the view left behind) are each
    // O(view); before, they ran after the write in one block (0 turns; 180 ms at 20k messages).
    const long = session(5_000, 2_000);
    const turns = loopTurns();
    let turnsAtWrite: number | undefined;
    const store = new MemorySessionStore();
    const set = store.set.bind(store);
    store.set = async (...args) => {
      const written = await set(...args);
      turnsAtWrite = turns.count;
      return written;
    };
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW, store });
    const value = await compactLongSession(manager, long, turns.start);
    turns.stop();
    expect(value.applied).toBe(true);
    expect(value.messages.length).toBeGreaterThan(4_096);
    expect(turnsAtWrite).toBeDefined();
    expect(turns.count - turnsAtWrite!).toBeGreaterThanOrEqual(3);
    await manager.shutdown();
  });
});

describe('the steps after a long compaction work in slices (issue 47 point 2)', () => {
  it('the guard and the view left behind give the loop turns within them, not only between them', async () => {
    // Each step (state, guard, view after compaction) was one block: at 20k messages 18-36 ms
    // each. A clock that runs a slice per reading (no waiting: the library's `clock.now` advanced) makes
    // every chance to pause in them a turn of the loop; before, only the 5 turns between steps.
    const long = session(5_000, 2_000);
    const turns = loopTurns();
    let turnsAtWrite: number | undefined;
    const now = clock.now;
    let skew = 0;
    const spy = vi.spyOn(clock, 'now').mockImplementation(() => now() + skew);
    const store = new MemorySessionStore();
    const set = store.set.bind(store);
    store.set = async (...args) => {
      const written = await set(...args);
      turnsAtWrite = turns.count;
      spy.mockImplementation(() => {
        skew += 1_000;
        return now() + skew;
      });
      return written;
    };
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW, store });
    try {
      const value = await compactLongSession(manager, long, turns.start);
      turns.stop();
      expect(value.applied).toBe(true);
      expect(value.messages.length).toBeGreaterThan(4_096);
      expect(turnsAtWrite).toBeDefined();
      // The guard (its order built and walked) and the view (entries, covered ids, the
      // assembled request) pause every 1,024 entries: well over the 5 turns between steps.
      expect(turns.count - turnsAtWrite!).toBeGreaterThanOrEqual(15);
    } finally {
      spy.mockRestore();
      await manager.shutdown();
    }
  });
});

/**
 * Sets a clock that never advances (no slice is ever due: nothing pauses) or one that runs a
 * slice per reading (every chance to pause is a turn of the loop); returns its undoing.
 */
function setClock(mode: 'still' | 'racing'): () => void {
  const now = clock.now;
  const start = now();
  let skew = 0;
  const spy = vi.spyOn(clock, 'now').mockImplementation(
    mode === 'still'
      ? () => start
      : () => {
          skew += 1_000;
          return now() + skew;
        },
  );
  return () => spy.mockRestore();
}

describe('a pause at every chance changes no result (issue 47 point 2)', () => {
  /**
   * A long compaction (its state written in parts, its kept counts and cached request walked in
   * steps), then a fresh manager on the stored session (the stored counts decoded in batches):
   * each under `mode`'s clock.
   */
  async function compactThenFresh(mode: 'still' | 'racing') {
    const long = session(5_000, 2_000);
    const store = new MemorySessionStore();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW, store });
    let restore = () => {};
    const compacted = await compactLongSession(manager, long, () => {
      restore = setClock(mode);
    });
    restore();
    await manager.shutdown();
    const { updatedAt: _, ...state } = (await store.get('long')) as unknown as Record<string, unknown>;
    // The counts the fresh manager reads (decoded in batches), and a state large enough to be
    // copied in parts (json-copy.ts).
    expect((await store.get('long::counts')) as unknown).toHaveProperty('tokenCounts.hashes');
    expect(isLargeState(state)).toBe(true);
    const fresh = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW, store });
    await fresh.ready();
    restore = setClock(mode);
    const again = await fresh.compact('long', JSON.parse(JSON.stringify(long))).finally(restore);
    await fresh.shutdown();
    return { compacted, state, again };
  }

  it('a long compaction and a fresh manager on its stored session send the same either way', async () => {
    const still = await compactThenFresh('still');
    const racing = await compactThenFresh('racing');
    expect(still.compacted.applied).toBe(true);
    expect(still.compacted.messages.length).toBeGreaterThan(4_096);
    expect(racing.compacted.messages).toEqual(still.compacted.messages);
    expect(racing.compacted.kept).toEqual(still.compacted.kept);
    expect(racing.compacted.tokensBefore).toBe(still.compacted.tokensBefore);
    expect(racing.compacted.tokensAfter).toBe(still.compacted.tokensAfter);
    expect(JSON.stringify(racing.state)).toBe(JSON.stringify(still.state));
    expect(racing.again.messages).toEqual(still.again.messages);
    expect(racing.again.tokensBefore).toBe(still.again.tokensBefore);
    expect(racing.again.version).toBe(still.again.version);
  });
});

describe('slicing changes no result', () => {
  const history = session(1_600);
  const other = session(900);
  const otherEnds = [40, 44, 48, 52, 56, 60].filter((end) => !hasOpenToolCalls(other.slice(0, end)));

  /**
   * Other sessions' calls for as long as `call` runs: each a first call of a short history (at
   * once), ending another session, under a small `cacheMaxBytes` (so that they evict, the
   * session under test included). They only run in the pauses of `call`.
   */
  async function interleave(manager: CompactManager, call: Promise<unknown>): Promise<number> {
    let running = true;
    const stop = () => {
      running = false;
    };
    call.then(stop, stop);
    let calls = 0;
    while (running) {
      // A turn of the loop between calls, as a server's requests arrive (the call under test resumes in its own).
      await new Promise((resolve) => setImmediate(resolve));
      if (!running) break;
      await manager.compact(`other-${calls % 3}`, other.slice(0, otherEnds[calls % otherEnds.length]));
      manager.endSession(`other-${(calls + 1) % 3}`);
      calls++;
    }
    return calls;
  }

  /** The result of `history` given whole to a fresh manager (one call, in slices). */
  async function whole(window: number, interleaved = false) {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: window,
      cacheMaxBytes: 2_000_000,
    });
    await manager.ready();
    const call = manager.compact('s', history);
    const others = interleaved ? await interleave(manager, call) : 0;
    const result = await call;
    // The same history again, once the work the first call left for after it is done.
    await manager.flush();
    const exact = await manager.compact('s', history);
    await manager.shutdown();
    return { result, others, exact };
  }

  it('the first call in slices sends what a history grown a few messages a call sends', async () => {
    const { result: sliced, exact } = await whole(HUGE_WINDOW);
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: HUGE_WINDOW });
    await manager.ready();
    let grown: Awaited<ReturnType<typeof manager.compact>> | undefined;
    for (let end = 40; ; end = Math.min(history.length, end + 40)) {
      if (end < history.length && hasOpenToolCalls(history.slice(0, end))) continue;
      grown = await manager.compact('s', history.slice(0, end));
      if (end === history.length) break;
    }
    await manager.shutdown();
    expect(sliced.messages).toEqual(grown!.messages);
    // The first call decided from a bound (never below the count), the next one counts exactly.
    expect(sliced.tokensBefore).toBeGreaterThanOrEqual(grown!.tokensBefore);
    expect(exact.tokensBefore).toBe(grown!.tokensBefore);
    expect(exact.messages).toEqual(grown!.messages);
  });

  it.each([
    ['a cold call', HUGE_WINDOW],
    ['a cold call that compacts', 128_000],
  ])('other sessions running in the pauses of %s change nothing', async (_, window) => {
    const alone = await whole(window);
    const shared = await whole(window, true);
    // The other sessions did run meanwhile (in the pauses).
    expect(shared.others).toBeGreaterThan(0);
    expect(shared.result.applied).toBe(alone.result.applied);
    expect(shared.result.applied).toBe(window !== HUGE_WINDOW);
    expect(shared.result.messages).toEqual(alone.result.messages);
    expect(shared.exact.messages).toEqual(alone.exact.messages);
    if (window === HUGE_WINDOW) {
      // Decided from a bound: messages other sessions counted meanwhile (the same content) add
      // their exact count, the others their bound; never below the exact count (the session
      // alone, its second call). Evicted by the other sessions, its second call is a first call again.
      expect(shared.result.tokensBefore).toBeGreaterThanOrEqual(alone.exact.tokensBefore);
      expect(shared.exact.tokensBefore).toBeGreaterThanOrEqual(alone.exact.tokensBefore);
    } else {
      expect(shared.result.tokensBefore).toBe(alone.result.tokensBefore);
      expect(shared.result.tokensAfter).toBe(alone.result.tokensAfter);
      expect(shared.exact.tokensBefore).toBe(alone.exact.tokensBefore);
    }
  });
});

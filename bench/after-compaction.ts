/**
 * `npx tsx bench/after-compaction.ts` (also in `npm run bench`): the first call after a
 * compaction against the other warm calls, by window (issue 38 point 2). A synthetic coding
 * session grows one turn per call (a new array of the same objects, as an agent loop that
 * slices its history does) in a 32k, 128k and 1M window with the built-in summarizer; the
 * call after each compaction is timed beside the other untriggered calls. Target: the first
 * call after a compaction O(what changed), so its median stays near the warm median whatever
 * the window (before the view was seeded from the compaction: 2.5 / 4.5 / 65 ms).
 */
import { CompactManager } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

async function atWindow(window: number) {
  const history: unknown[] = [];
  for (let part = 0; history.length < window / 15; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 3 + part, toolDensity: 3, resultChars: 400 });
    history.push(
      ...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')),
    );
  }
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: window });
  const after: number[] = [];
  const warm: number[] = [];
  let previousApplied = false;
  for (let end = 40; end < history.length; end++) {
    if ((history[end] as { role: string }).role !== 'user') continue;
    const sent = history.slice(0, end);
    const t = performance.now();
    const result = await manager.compact('s', sent);
    const took = performance.now() - t;
    if (!result.applied) (previousApplied ? after : warm).push(took);
    previousApplied = result.applied;
    // The model call: a turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.shutdown();
  return {
    window,
    messages: history.length,
    after: median(after),
    compactions: after.length,
    warm: median(warm),
  };
}

export async function runAfterCompactionBench(): Promise<void> {
  console.log('First call after a compaction (built-in summarizer, one turn per call, median):');
  for (const window of [32_000, 128_000, 1_000_000]) {
    const row = await atWindow(window);
    console.log(
      `  ${String(window / 1000).padStart(5)}k window, ${row.messages.toLocaleString('en')} messages: first after a compaction ${row.after.toFixed(3)} ms (${row.compactions} compactions), other warm calls ${row.warm.toFixed(3)} ms (${(row.after / row.warm).toFixed(1)}x)`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runAfterCompactionBench();

/**
 * Memory at the heap level (issue 24 point 3): a long-lived manager that served many sessions
 * gives the heap back when those sessions end. The counters of `cacheStatus` are checked in
 * src/core/manager/compact-manager-memory.test.ts; here the V8 heap itself is measured after full
 * garbage collections, so a reference the counters do not see (a map keyed by session, a
 * closure over a history) would show.
 */
import { getHeapCodeStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * The heap after full collections, without V8's compiled code and bytecode: the functions that
 * ran stay compiled (endSession's and shutdown's paths run first after the baseline), a bounded
 * cost that is not memory held for sessions (0.2-0.4 MB of it tipped this test over its limit
 * on a busy CI machine).
 */
function heapAfterGc(): number {
  for (let i = 0; i < 4; i++) gc();
  const code = getHeapCodeStatistics();
  return process.memoryUsage().heapUsed - code.code_and_metadata_size - code.bytecode_and_metadata_size;
}

const MB = 1024 * 1024;

/**
 * The heap once the work already queued has run: slices and cleanups the manager scheduled
 * (timers, immediates) hold their closures until they run, later on a busy machine (a CI
 * rehearsal under load read 2.25 MB after shutdown where a quiet run reads 1.0 MB). Reads
 * again after each turn of the event loop until a reading no longer falls.
 */
async function settledHeap(): Promise<number> {
  let least = heapAfterGc();
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setImmediate(resolve));
    const now = heapAfterGc();
    if (now >= least - 16 * 1024) return Math.min(now, least);
    least = now;
  }
  return least;
}

/** A coding session's turns: a user message, a tool call and a ~4 KB result, an answer. */
function session(seed: number, turns: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `session ${seed} step ${i}: look at module ${seed}-${i}` });
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${i}`,
          type: 'function',
          function: { name: 'read_file', arguments: `{"path":"src/m${seed}/${i}.ts"}` },
        },
      ],
    });
    out.push({
      role: 'tool',
      tool_call_id: `call_${i}`,
      content: `// ${seed}/${i}\n${`const v${seed}_${i} = ${i};\n`.repeat(200)}`,
    });
    out.push({ role: 'assistant', content: `Read src/m${seed}/${i}.ts; it defines v${seed}_${i}.` });
  }
  return out;
}

async function serve(manager: CompactManager, ids: readonly string[]): Promise<void> {
  for (const [k, id] of ids.entries()) {
    let history: Record<string, unknown>[] | undefined = session(k, 60);
    // The agent grows its history and calls preflight each turn, as a loop does.
    for (let end = 8; end <= history.length; end += 8) await manager.compact(id, history.slice(0, end));
    history = undefined;
  }
}

describe('the heap after sessions end', () => {
  it('returns near its baseline after endSession, and after shutdown', async () => {
    // The stored states stay after endSession by design; this store stands for one outside
    // the process, emptied below so that only the manager's own memory is measured.
    const store = new MemorySessionStore();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000, store });
    // Load the tokenizer and compile the code paths first: they stay for the process's life.
    await serve(manager, ['warm']);
    await manager.endSession('warm');
    const baseline = await settledHeap();

    const ids = Array.from({ length: 40 }, (_, i) => `s${i}`);
    await serve(manager, ids);
    const held = (await settledHeap()) - baseline;
    // The sessions are live (the manager caches their parses, counts and views): enough for
    // the comparison below to mean something.
    expect(held, `held ${(held / MB).toFixed(1)} MB`).toBeGreaterThan(4 * MB);

    for (const id of ids) await manager.endSession(id);
    for (const id of ids) await store.delete(id);
    const afterEnd = (await settledHeap()) - baseline;
    expect(
      afterEnd,
      `after endSession ${(afterEnd / MB).toFixed(1)} MB of ${(held / MB).toFixed(1)} MB`,
    ).toBeLessThan(Math.max(1 * MB, held * 0.1));

    console.info(
      `[heap-memory] 40 sessions held ${(held / MB).toFixed(1)} MB over the baseline; after endSession ${(afterEnd / MB).toFixed(2)} MB (compiled code apart)`,
    );
    await serve(manager, ids.slice(0, 10));
    await manager.shutdown();
    // The store stands for one outside the process (as above): the states of the sessions
    // served again are its memory, not the manager's (0.8 MB of what this test once counted).
    for (const id of ids.slice(0, 10)) await store.delete(id);
    const afterShutdown = (await settledHeap()) - baseline;
    console.info(`[heap-memory] after shutdown ${(afterShutdown / MB).toFixed(2)} MB (compiled code apart)`);
    expect(afterShutdown, `after shutdown ${(afterShutdown / MB).toFixed(1)} MB`).toBeLessThan(
      Math.max(1 * MB, held * 0.1),
    );
  });
});

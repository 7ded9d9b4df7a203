/**
 * `npx tsx bench/tokenizer-warmup.ts [ready|cold] [model]`: the longest stretch the event loop
 * is held while the tokenizer loads in a fresh process, read by bench/block-monitor.ts (main
 * thread CPU per gap between turns of the loop, GC pauses apart):
 * `ready` awaits `manager.ready()` (the tables loaded in slices), `cold` counts one text
 * first (the tables loaded in one block). Prints one JSON line; bench/event-loop.ts runs both
 * in child processes (the tables load once per process).
 */
import { CompactManager } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { watchBlocks } from './block-monitor.js';

export interface WarmupFigures {
  mode: 'ready' | 'cold';
  totalMs: number;
  /** The longest gap between two turns of the loop (wall clock: includes the OS descheduling the process). */
  longestStallMs: number;
  /** The main thread's CPU time in its longest gap (schedstat; what the load and GC held it). */
  longestStallCpuMs: number;
  /** The same over gaps with no GC pause in them: the load's own longest stretch. */
  workMs: number;
  /** The longest GC pause during the load (wall clock) and its kind. */
  gcMs: number;
  gcKind: string;
  /** The longest gap of the same loop doing nothing for as long (the machine's noise). */
  idleGapMs: number;
  /** The first `compact` after the load (a 40-turn coding session): what a first request pays on top. */
  firstCallMs: number;
}

async function measure(mode: 'ready' | 'cold', model: string): Promise<WarmupFigures> {
  const manager = new CompactManager({ model, maxContextTokens: 128_000 });
  // A few turns first: the loop is running before the load starts.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  const held = await watchBlocks(mode, () =>
    mode === 'ready'
      ? manager.ready()
      : // What a first call does without ready(): the count loads the tables in one block.
        new Promise<void>((resolve) =>
          setImmediate(() => {
            manager.counter.countText('hello world');
            resolve();
          }),
        ),
  );
  const totalMs = performance.now() - started;
  const history = syntheticSession({ turns: 40, seed: 5, toolDensity: 2, resultChars: 2_000 });
  const callStarted = performance.now();
  await manager.compact('first', history);
  const firstCallMs = performance.now() - callStarted;
  const idle = await watchBlocks(
    'idle',
    () => new Promise((resolve) => setTimeout(resolve, Math.min(totalMs, 2_000))),
  );
  return {
    mode,
    totalMs,
    longestStallMs: held.wallMs,
    longestStallCpuMs: held.threadMs,
    workMs: held.workMs,
    gcMs: held.gcMs,
    gcKind: held.gcKind,
    idleGapMs: idle.wallMs,
    firstCallMs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = process.argv[2] === 'cold' ? 'cold' : 'ready';
  console.log(JSON.stringify(await measure(mode, process.argv[3] ?? 'gpt-4o')));
}

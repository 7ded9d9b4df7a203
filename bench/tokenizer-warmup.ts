/**
 * `npx tsx bench/tokenizer-warmup.ts [ready|cold|first] [model]`: the longest stretch the event loop
 * is held while the tokenizer loads in a fresh process, read by bench/block-monitor.ts (main
 * thread CPU per gap between turns of the loop, GC pauses apart):
 * `ready` awaits `manager.ready()` (the tables loaded in slices), `cold` counts one text
 * first (the tables loaded in one block), `first` is a first `compact` of about 1,000 messages
 * without `ready()` (it awaits the sliced load itself). Prints one JSON line; bench/event-loop.ts runs both
 * in child processes (the tables load once per process).
 */
import { CompactManager } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { watchBlocks } from './block-monitor.js';

/** `ready`: `manager.ready()`; `cold`: one count without it; `first`: a first `compact` without it. */
export type WarmupMode = 'ready' | 'cold' | 'first';

export interface WarmupFigures {
  mode: WarmupMode;
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
  /** The first `compact` after the load (a 40-turn coding session; `first`: the watched call itself). */
  firstCallMs: number;
}

/** What each mode watches: the load through `ready()`, a bare count, or a whole first call. */
function load(mode: WarmupMode, manager: CompactManager, history: unknown[]): Promise<unknown> {
  if (mode === 'ready') return manager.ready();
  // A fresh process's first preflight without ready(): compact awaits the same load.
  if (mode === 'first') return manager.compact('first', history);
  // What a count does without ready(): the tables loaded in one block.
  return new Promise<void>((resolve) =>
    setImmediate(() => {
      manager.counter.countText('hello world');
      resolve();
    }),
  );
}

async function measure(mode: WarmupMode, model: string): Promise<WarmupFigures> {
  const manager = new CompactManager({ model, maxContextTokens: 2_000_000 });
  // About 1,000 messages, as read from a database (built before the watch: not the call's work).
  const first = JSON.parse(
    JSON.stringify(syntheticSession({ turns: 130, seed: 3, toolDensity: 3, resultChars: 3_300 })),
  ) as unknown[];
  // A few turns first: the loop is running before the load starts.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  const held = await watchBlocks(mode, () => load(mode, manager, first));
  const totalMs = performance.now() - started;
  const history = syntheticSession({ turns: 40, seed: 5, toolDensity: 2, resultChars: 2_000 });
  const callStarted = performance.now();
  await manager.compact('next', history);
  const firstCallMs = mode === 'first' ? totalMs : performance.now() - callStarted;
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
  const mode = process.argv[2] === 'cold' || process.argv[2] === 'first' ? process.argv[2] : 'ready';
  console.log(JSON.stringify(await measure(mode, process.argv[3] ?? 'gpt-4o')));
}

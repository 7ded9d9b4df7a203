/**
 * `npx tsx bench/event-loop.ts [--quick]`: the longest block of the event loop per path (issue 24
 * point 5, issue 47 point 2: no block over 20 ms anywhere). Each path runs under three
 * monitors (bench/block-monitor.ts): setImmediate ticks with the main thread's CPU time per gap,
 * `monitorEventLoopDelay`, and the GC pauses (`PerformanceObserver` 'gc'); the block of a path
 * is the most main-thread CPU between two turns of the loop or its longest GC pause, and each
 * row says met or MISSED against 20 ms. Wall gaps are printed beside it (on a loaded machine
 * they count the OS running other processes; the idle row shows the machine's own noise).
 *
 * Paths: the cold first call of a long history (5k and 20k messages, the exact count after it
 * included), the LangChain middleware's first call of a fresh process (a known 16k session,
 * and the same with its counts not stored), warm triggered compactions, warm untriggered calls,
 * synchronous triggered compactions, and background mode (the built-in summarizer preparing
 * between calls: each call, and the agent's model time while it prepares). Background mode with
 * no slicing (`sliceMs` of a day) is printed as a reference, outside the verdict.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { SLICE_MS } from '../src/core/time-slice.js';
import { CompactManager, EmbeddedSummarizer, MemorySessionStore } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { hasOpenToolCalls } from '../test/support/open-tool-calls.js';
import { type Blocks, blockOf, medianRun, printBlocks, watchBlocks } from './block-monitor.js';
import type { WarmupFigures } from './tokenizer-warmup.js';

const MODEL_MS = 20;

/** {@link watchBlocks} or a profiled copy of it (bench/block-profile.ts). */
export type Watch = typeof watchBlocks;
const DAY_MS = 86_400_000;
const quick = process.argv.includes('--quick');
/** `--paths=cold,langchain,trigger,session,background`: the paths to run (all by default). */
const only = process.argv
  .find((arg) => arg.startsWith('--paths='))
  ?.split('=')[1]
  ?.split(',');
const runs = (path: string) => only === undefined || only.includes(path);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The worse of two rows (by block). */
const worst = (a: Blocks | undefined, b: Blocks) => (a && blockOf(a) >= blockOf(b) ? a : b);

/**
 * A synthetic session grows to `turns` turns in a 128k window with `background: true` and the
 * built-in summarizer; between preflights the agent "calls the model" (20 ms, longer while a
 * preparation runs). The worst block inside a call, and in the model's time.
 */
export async function backgroundRun(
  label: string,
  sliceMs: number,
  turns: number,
  watch: Watch = watchBlocks,
): Promise<Blocks[]> {
  const history = syntheticSession({ turns, seed: 5, toolDensity: 2.5, resultChars: 500 });
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 128_000,
    background: true,
    summarizer: new EmbeddedSummarizer({ sliceMs }),
  });
  // At start-up, as docs/how-it-works.md asks of a server: the tokenizer, the first call's code
  // and the built-in summarizer's first summary readied ahead (issue 47: without it the first
  // call paid those in its own blocks).
  await manager.ready();
  // Ends of turns (no open tool calls), so every preflight is a request an agent would send.
  const ends: number[] = [];
  for (let end = 40; end <= history.length; end += 24)
    if (!hasOpenToolCalls(history.slice(0, end))) ends.push(end);
  let call: Blocks | undefined;
  let between: Blocks | undefined;
  for (const end of ends) {
    call = worst(call, await watch('', () => manager.compact('loop', history.slice(0, end))));
    // The model call: the agent's own time, shared with a running preparation.
    between = worst(
      between,
      await watch('', async () => {
        await sleep(MODEL_MS);
        while (manager.backgroundStatus().running > 0) await sleep(MODEL_MS);
      }),
    );
  }
  const status = manager.backgroundStatus();
  await manager.shutdown();
  const at = `${(ends.at(-1) ?? 0).toLocaleString('en')} messages, ${status.started} preparations`;
  return [
    { ...call!, path: `background mode, ${label}, ${at}: in a call` },
    { ...between!, path: `background mode, ${label}, ${at}: while preparing` },
  ];
}

/** Background mode at 200 and 400 turns, with the default slice and (as a reference) without slicing. */
export async function backgroundBench(): Promise<{ rows: Blocks[]; reference: Blocks[] }> {
  if (!runs('background')) return { rows: [], reference: [] };
  // Warm the tokenizer and the code first (a long-running server has).
  await backgroundRun('warm', SLICE_MS, 60);
  const rows: Blocks[] = [];
  const reference: Blocks[] = [];
  for (const turns of quick ? [200] : [200, 400]) {
    rows.push(...(await backgroundRun('5 ms slices', SLICE_MS, turns)));
    reference.push(...(await backgroundRun('no slicing', DAY_MS, turns)));
  }
  return { rows, reference };
}

/** The tokenizer's load in a fresh process: through `manager.ready()`, a first compact without it, and cold (a bare count). */
export async function tokenizerWarmupBench(): Promise<WarmupFigures[]> {
  const script = new URL('./tokenizer-warmup.ts', import.meta.url).pathname;
  const figures: WarmupFigures[] = [];
  for (const mode of ['ready', 'first', 'cold'] as const) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, mode]);
    figures.push(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as WarmupFigures);
  }
  return figures;
}

/** A synthetic coding session of at least `messages` messages (cut at the end of a turn), ~270 tokens a message. */
export function longHistory(messages: number, resultChars = 2500): unknown[] {
  let turns = Math.ceil(messages / 8);
  let history = syntheticSession({ turns, seed: 7, resultChars });
  while (history.length < messages) {
    turns = Math.ceil((turns * messages) / history.length) + 1;
    history = syntheticSession({ turns, seed: 7, resultChars });
  }
  let end = messages;
  while (end > 0 && hasOpenToolCalls(history.slice(Math.max(0, end - 40), end))) end--;
  return history.slice(0, end);
}

/** The first call of a long history in a process whose tokenizer is loaded: indexed and counted cold. */
export async function coldCount(messages: number, watch: Watch = watchBlocks): Promise<Blocks> {
  const history = longHistory(messages);
  // A window the history fits: the count alone, no compaction.
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 20_000_000 });
  await manager.ready();
  // The call and the work it leaves for after it (the exact count of a call decided from a bound).
  const blocks = await watch('', async () => {
    await manager.compact('cold', history);
    await manager.flush();
  });
  const tokens = (await manager.compact('cold', history)).tokensBefore;
  await manager.shutdown();
  return {
    ...blocks,
    path: `first call, cold count (and after it): ${history.length.toLocaleString('en')} messages, ${(tokens / 1e6).toFixed(2)}M tokens`,
  };
}

/**
 * The LangChain middleware's first call in a fresh manager (a new process) on a session of
 * `size` messages another manager served through the middleware before (its counts stored
 * with the state), or the same with the counts record deleted; the work it leaves for after
 * the call (flush) included.
 */
export async function langChainFirst(
  size: number,
  counts: boolean,
  watch: Watch = watchBlocks,
): Promise<Blocks> {
  const classes = await import('@langchain/core/messages');
  const { chatToLangChain, compactionMiddleware } = await import('../src/adapters/langchain/index.js');
  const { chatOf } = await import('./langchain-middleware.js');
  const chat = chatOf(size);
  const store = new MemorySessionStore();
  const options = { model: 'gpt-4o', maxContextTokens: 2_000_000_000, store } as const;
  const reply = new classes.AIMessage('ok');
  const call = (manager: CompactManager, messages: unknown[]) =>
    compactionMiddleware(manager, { sessionId: 'bench' }).wrapModelCall!(
      { messages, tools: [], runtime: {} } as never,
      (async () => reply) as never,
    );
  const served = new CompactManager(options);
  await served.ready();
  await call(served, chatToLangChain(chat, classes));
  await served.shutdown();
  if (!counts) await store.delete('bench::counts');
  const manager = new CompactManager(options);
  await manager.ready();
  const state = chatToLangChain(JSON.parse(JSON.stringify(chat)), classes);
  const blocks = await watch('', async () => {
    await call(manager, state);
    await manager.flush();
  });
  await manager.shutdown();
  return {
    ...blocks,
    path: `LangChain middleware, first call of a fresh manager, ${size.toLocaleString('en')} messages, ${counts ? 'known session' : 'counts not stored'}`,
  };
}

/**
 * A triggered synchronous compaction of a long history whose earlier calls indexed and counted
 * it (warm): the trigger comes from the window of the last call (its tokens at 91% of it).
 * Large tool results (`resultChars` 2,500, cache-aware) are settled by clearing them; small
 * ones (150) need the built-in summarizer.
 */
async function warmTrigger(messages: number, resultChars: number): Promise<Blocks> {
  const history = longHistory(messages, resultChars);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 20_000_000 });
  await manager.ready();
  let end = history.length - 30;
  while (end > 0 && hasOpenToolCalls(history.slice(0, end))) end--;
  await manager.compact('hot', history.slice(0, end));
  // The exact count (a first call of a long history may decide from a bound and count after it).
  await manager.flush();
  const first = await manager.compact('hot', history.slice(0, end));
  const options = {
    maxContextTokens: Math.ceil(first.tokensBefore * 1.1),
    ...(resultChars > 1_000 ? { policy: { cacheAware: true } } : {}),
  };
  let levels = '';
  const blocks = await watchBlocks('', async () => {
    const result = await manager.compact('hot', history, options);
    levels = result.levels.map((level) => level.level).join(', ');
  });
  await manager.shutdown();
  return { ...blocks, path: `triggered, warm, ${history.length.toLocaleString('en')} messages: ${levels}` };
}

/** Warm untriggered calls and triggered synchronous compactions of one growing session: the worst call of each. */
async function sessionPaths(): Promise<{ warm: Blocks; triggered: Blocks }> {
  const history = syntheticSession({ turns: 400, seed: 5, toolDensity: 2.5, resultChars: 500 });
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  await manager.ready();
  const ends: number[] = [];
  for (let end = 40; end <= history.length; end += 24)
    if (!hasOpenToolCalls(history.slice(0, end))) ends.push(end);
  let warm: Blocks | undefined;
  let triggered: Blocks | undefined;
  // A first call of another session warms the code (the redaction rules, the pipeline's functions).
  await manager.compact('warm-up', history.slice(0, ends[0]));
  for (const end of ends) {
    let applied = false;
    const blocks = await watchBlocks('', async () => {
      applied = (await manager.compact('paths', history.slice(0, end))).applied;
    });
    if (applied) triggered = worst(triggered, blocks);
    else warm = worst(warm, blocks);
  }
  await manager.shutdown();
  if (!warm || !triggered) throw new Error('the session should have both warm and triggered calls');
  return { warm, triggered };
}

/** The median of `runs` runs of `path` (by block). */
async function medianOf(runs: number, path: () => Promise<Blocks>): Promise<Blocks> {
  const each: Blocks[] = [];
  for (let run = 0; run < runs; run++) each.push(await path());
  return medianRun(each);
}

/**
 * Per path, the longest block of the loop, the median of `runs` runs: the cold first count of a
 * long history (5k and 20k messages), the LangChain middleware's first call (16k messages),
 * warm triggered compactions, warm untriggered calls, triggered synchronous compactions.
 */
export async function pathStallsBench(times = 3): Promise<Blocks[]> {
  const rows: Blocks[] = [];
  if (runs('cold'))
    for (const messages of quick ? [5_000] : [5_000, 20_000])
      rows.push(await medianOf(times, () => coldCount(messages)));
  if (runs('langchain'))
    for (const counts of [true, false])
      rows.push(await medianOf(times, () => langChainFirst(quick ? 4_000 : 16_000, counts)));
  if (runs('trigger'))
    for (const resultChars of [2_500, 150])
      rows.push(await medianOf(times, () => warmTrigger(5_000, resultChars)));
  if (!runs('session')) return rows;
  const sessions: { warm: Blocks; triggered: Blocks }[] = [];
  for (let run = 0; run < times; run++) sessions.push(await sessionPaths());
  rows.push({
    ...medianRun(sessions.map((s) => s.warm)),
    path: 'untriggered preflight, 24 new messages a call (128k window)',
  });
  rows.push({
    ...medianRun(sessions.map((s) => s.triggered)),
    path: 'triggered compaction, built-in summarizer, synchronous',
  });
  return rows;
}

/** The longest gap of the loop doing nothing for `ms` (the machine's own noise). */
export async function idleGap(ms = 1_000): Promise<Blocks> {
  return watchBlocks(`idle loop for ${ms} ms (the machine's noise, outside the verdict)`, () => sleep(ms));
}

export function printTokenizerWarmup(figures: readonly WarmupFigures[]): void {
  console.log('Tokenizer load in a fresh process (gpt-4o, o200k_base): longest stall of the loop');
  for (const f of figures)
    console.log(
      `  ${(f.mode === 'ready' ? 'await manager.ready() (in slices)' : f.mode === 'first' ? 'first compact, 1k messages, no ready()' : 'first count, cold (one block)').padEnd(38)} ${f.longestStallMs.toFixed(1).padStart(7)} ms wall (${f.longestStallCpuMs.toFixed(1)} ms main-thread CPU; without GC in the gap ${f.workMs.toFixed(1)} ms; longest GC ${f.gcMs.toFixed(1)} ms ${f.gcKind}), load ${f.totalMs.toFixed(0)} ms, first call after it ${f.firstCallMs.toFixed(1)} ms; idle loop's own longest gap ${f.idleGapMs.toFixed(1)} ms`,
    );
}

/** Every path's longest block with met/MISSED; true when every path met the target. */
export function printPathStalls(
  rows: readonly Blocks[],
  background?: { rows: Blocks[]; reference: Blocks[] },
): boolean {
  const met = printBlocks(
    `Longest block of the event loop per path (tokenizer loaded ahead; median of 3 runs; machine load ${loadAverage()})`,
    [...rows, ...(background?.rows ?? [])],
  );
  if (background && background.reference.length > 0) {
    console.log('  reference, outside the verdict: background mode without slicing (sliceMs of a day)');
    for (const row of background.reference)
      console.log(
        `    ${row.path.padEnd(76)} block ${blockOf(row).toFixed(1).padStart(6)} ms (GC max ${row.gcMs.toFixed(1)} ms)`,
      );
  }
  return met;
}

/** The 1-minute load average, the machine's business while the figures were taken. */
function loadAverage(): string {
  return os.loadavg()[0]!.toFixed(1);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!quick && !only) printTokenizerWarmup(await tokenizerWarmupBench());
  printPathStalls([await idleGap(), ...(await pathStallsBench(quick ? 1 : 3))], await backgroundBench());
}

/**
 * `npx tsx bench/event-loop.ts`: how long the event loop is held while the built-in
 * summarizer prepares a summary in the background (issue 24 point 5). A synthetic coding
 * session grows to ~1,600 and ~3,200 messages in a 128k window with `background: true` and
 * the built-in summarizer; between preflights the agent "calls the model" (a 20 ms timer)
 * while the preparation runs. `monitorEventLoopDelay` samples the loop every millisecond
 * during the model calls (the agent's own time), and the longest stretch the summarizer
 * holds the loop is timed with setImmediate ticks.
 *
 * Compared in one run: the summarizer's default slice (a turn of the loop every 5 ms) and
 * no slicing (`sliceMs` of a day: each summary in one piece). Target: p99 delay and the
 * longest block <= 20 ms with the default.
 */
import { execFile } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { SLICE_MS } from '../src/core/summary/embedded/steps.js';
import { CompactManager, EmbeddedSummarizer } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { hasOpenToolCalls } from '../test/support/open-tool-calls.js';
import type { WarmupFigures } from './tokenizer-warmup.js';

const TARGET_MS = 20;
const MODEL_MS = 20;
const DAY_MS = 86_400_000;

interface LoopFigures {
  label: string;
  messages: number;
  preparations: number;
  p99Ms: number;
  maxMs: number;
  longestBlockMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(label: string, sliceMs: number, turns: number): Promise<LoopFigures> {
  const history = syntheticSession({ turns, seed: 5, toolDensity: 2.5, resultChars: 500 });
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 128_000,
    background: true,
    summarizer: new EmbeddedSummarizer({ sliceMs }),
  });
  // Ends of turns (no open tool calls), so every preflight is a request an agent would send.
  const ends: number[] = [];
  for (let end = 40; end <= history.length; end += 24)
    if (!hasOpenToolCalls(history.slice(0, end))) ends.push(end);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let longest = 0;
  let last = performance.now();
  let ticking = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (ticking) setImmediate(tick);
  };
  for (const end of ends) {
    await manager.compact('loop', history.slice(0, end));
    // The model call: the agent's own time, shared with a running preparation.
    delay.enable();
    last = performance.now();
    ticking = true;
    setImmediate(tick);
    await sleep(MODEL_MS);
    while (manager.backgroundStatus().running > 0) await sleep(MODEL_MS);
    ticking = false;
    delay.disable();
  }
  const status = manager.backgroundStatus();
  await manager.shutdown();
  return {
    label,
    messages: ends.at(-1) ?? 0,
    preparations: status.started,
    p99Ms: delay.percentile(99) / 1e6,
    maxMs: delay.max / 1e6,
    longestBlockMs: longest,
  };
}

export async function eventLoopBench(): Promise<LoopFigures[]> {
  // Warm the tokenizer and the code first (a long-running server has).
  await run('warm', SLICE_MS, 60);
  const figures: LoopFigures[] = [];
  for (const turns of [200, 400]) {
    figures.push(await run('default (5 ms slices)', SLICE_MS, turns));
    figures.push(await run('no slicing', DAY_MS, turns));
  }
  return figures;
}

/** The tokenizer's load in a fresh process: awaited through `manager.ready()`, and cold (the first count). */
export async function tokenizerWarmupBench(): Promise<WarmupFigures[]> {
  const script = new URL('./tokenizer-warmup.ts', import.meta.url).pathname;
  const figures: WarmupFigures[] = [];
  for (const mode of ['ready', 'cold'] as const) {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script, mode]);
    figures.push(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as WarmupFigures);
  }
  return figures;
}

/** The longest stall of the loop while `work` runs (setImmediate ticks). */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let done = false;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  done = true;
  return Math.max(longest, performance.now() - last);
}

/** Per path, the longest stall of the loop in one call: warm untriggered, and a triggered synchronous compaction. */
export async function pathStallsBench(): Promise<{ path: string; longestMs: number }[]> {
  const history = syntheticSession({ turns: 400, seed: 5, toolDensity: 2.5, resultChars: 500 });
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  await manager.ready();
  const ends: number[] = [];
  for (let end = 40; end <= history.length; end += 24)
    if (!hasOpenToolCalls(history.slice(0, end))) ends.push(end);
  let warm = 0;
  let triggered = 0;
  for (const end of ends) {
    let applied = false;
    const stall = await longestStall(async () => {
      applied = (await manager.compact('paths', history.slice(0, end))).applied;
    });
    if (applied) triggered = Math.max(triggered, stall);
    else warm = Math.max(warm, stall);
  }
  await manager.shutdown();
  return [
    { path: 'untriggered preflight, 24 new messages a call (128k window)', longestMs: warm },
    { path: 'triggered compaction, built-in summarizer, synchronous', longestMs: triggered },
  ];
}

export function printTokenizerWarmup(figures: readonly WarmupFigures[]): void {
  console.log('Tokenizer load in a fresh process (gpt-4o, o200k_base): longest stall of the loop');
  for (const f of figures)
    console.log(
      `  ${(f.mode === 'ready' ? 'await manager.ready() (in slices)' : 'first count, cold (one block)').padEnd(34)} ${f.longestStallMs.toFixed(1).padStart(7)} ms wall (${f.longestStallCpuMs.toFixed(1)} ms CPU), load ${f.totalMs.toFixed(0)} ms; idle loop's own longest gap ${f.idleGapMs.toFixed(1)} ms`,
    );
}

export function printPathStalls(rows: readonly { path: string; longestMs: number }[]): void {
  console.log('Longest stall of the loop per path (one call each, tokenizer loaded ahead):');
  for (const row of rows) console.log(`  ${row.path.padEnd(56)} ${row.longestMs.toFixed(1).padStart(7)} ms`);
}

export function printEventLoop(figures: readonly LoopFigures[]): boolean {
  console.log('\nEvent loop while the built-in summarizer prepares in the background (128k window)');
  console.log('mode                  | messages | preparations | delay p99 | delay max | longest block');
  for (const f of figures)
    console.log(
      `${f.label.padEnd(21)} | ${String(f.messages).padStart(8)} | ${String(f.preparations).padStart(12)} | ${f.p99Ms.toFixed(1).padStart(6)} ms | ${f.maxMs.toFixed(1).padStart(6)} ms | ${f.longestBlockMs.toFixed(1).padStart(8)} ms`,
    );
  const ours = figures.filter((f) => f.label.startsWith('default'));
  const met = ours.every((f) => f.p99Ms <= TARGET_MS && f.longestBlockMs <= TARGET_MS);
  console.log(
    `target: p99 delay and longest block <= ${TARGET_MS} ms with the default slice: ${met ? 'met' : 'MISSED'}`,
  );
  return met;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printTokenizerWarmup(await tokenizerWarmupBench());
  printPathStalls(await pathStallsBench());
  printEventLoop(await eventLoopBench());
}

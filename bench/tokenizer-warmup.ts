/**
 * `npx tsx bench/tokenizer-warmup.ts [ready|cold] [model]`: the longest stretch the event loop
 * is held while the tokenizer loads in a fresh process, timed with setImmediate ticks:
 * `ready` awaits `manager.ready()` (the tables loaded in slices), `cold` counts one text
 * first (the tables loaded in one block). Prints one JSON line; bench/event-loop.ts runs both
 * in child processes (the tables load once per process).
 */
import { CompactManager } from '../src/index.js';

export interface WarmupFigures {
  mode: 'ready' | 'cold';
  totalMs: number;
  /** The longest gap between two turns of the loop (wall clock: includes the OS descheduling the process). */
  longestStallMs: number;
  /** The process's CPU time within that kind of gap, at most (what the load itself held). */
  longestStallCpuMs: number;
  /** The longest gap of the same loop doing nothing for as long (the machine's noise). */
  idleGapMs: number;
}

/** Ticks the loop with setImmediate until `until` resolves; the longest gaps, wall and CPU. */
async function gaps(until: Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  let wall = 0;
  let cpu = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let done = false;
  void until.then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const used = process.cpuUsage(lastCpu);
      wall = Math.max(wall, now - last);
      cpu = Math.max(cpu, (used.user + used.system) / 1000);
      last = now;
      lastCpu = process.cpuUsage();
      if (done) resolve();
      else setImmediate(tick);
    };
    setImmediate(tick);
  });
  return { wallMs: wall, cpuMs: cpu };
}

async function measure(mode: 'ready' | 'cold', model: string): Promise<WarmupFigures> {
  const manager = new CompactManager({ model, maxContextTokens: 128_000 });
  // A few turns first: the loop is running before the load starts.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  const started = performance.now();
  const load =
    mode === 'ready'
      ? manager.ready()
      : // What a first call does without ready(): the count loads the tables in one block.
        new Promise<void>((resolve) =>
          setImmediate(() => {
            manager.counter.countText('hello world');
            resolve();
          }),
        );
  const held = await gaps(load);
  const totalMs = performance.now() - started;
  const idle = await gaps(new Promise((resolve) => setTimeout(resolve, Math.min(totalMs, 2_000))));
  return {
    mode,
    totalMs,
    longestStallMs: held.wallMs,
    longestStallCpuMs: held.cpuMs,
    idleGapMs: idle.wallMs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = process.argv[2] === 'cold' ? 'cold' : 'ready';
  console.log(JSON.stringify(await measure(mode, process.argv[3] ?? 'gpt-4o')));
}

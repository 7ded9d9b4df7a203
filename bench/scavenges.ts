/**
 * `npx tsx bench/scavenges.ts [--messages=16000] [--runs=3] [--against=DIR] [--serial] [--fresh]`: the young-generation
 * collections (scavenges) of a cold first call, what a history's per-message layout costs the
 * collector (issue 47 point 2: no pause over 20 ms). A fresh manager, its tokenizer loaded,
 * indexes and counts a history it has never seen (the call, then the exact count after it),
 * and keeps it alive. Each run is a child process under `--trace-gc-nvp`; between two markers
 * it sums the scavenges: their number, total and longest pause, bytes copied inside the young
 * generation or promoted out of it (V8's `new_space_survived`) and those promoted, and the most
 * one scavenge moved (copied plus promoted: the bytes a pause is made of, load-independent where
 * pauses are not); then, after a full collection, the live heap the
 * index holds (against the heap before the manager was made), and the cold call's wall time.
 *
 * `--against=DIR`: a second checkout of the package (for example `git archive <commit>` with a
 * `node_modules` link), run alternately with this one (A, B, A, B, ...), medians per side.
 * Pauses are wall clock and depend on the machine's load (print `uptime` beside them); bytes do not.
 * `--serial` runs the children with `--single-threaded-gc`: a pause is then the collector's own
 * work, not a wait for helper threads a loaded machine has descheduled.
 * `--fresh`: the history is parsed from its JSON just before the call (as an SDK reading it
 * from a database would), so it is young when the call starts and the scavenges of the call
 * copy and promote the caller's objects too; without it the history is promoted by full
 * collections first and every byte the scavenges copy is the library's. The live heap then
 * counts the history as well.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const START = 'SCAVENGE-PROBE-START';
const END = 'SCAVENGE-PROBE-END';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

/** A synthetic coding session of at least `messages` messages cut at the end of a turn (as bench/event-loop.ts). */
async function longHistory(tree: string, messages: number): Promise<unknown[]> {
  const { syntheticSession } = (await import(
    pathToFileURL(path.join(tree, 'src/testing/synthetic-session.ts')).href
  )) as typeof import('../src/testing/synthetic-session.js');
  const { hasOpenToolCalls } = await import('../test/support/open-tool-calls.js');
  let turns = Math.ceil(messages / 8);
  let history = syntheticSession({ turns, seed: 7, resultChars: 2500 });
  while (history.length < messages) {
    turns = Math.ceil((turns * messages) / history.length) + 1;
    history = syntheticSession({ turns, seed: 7, resultChars: 2500 });
  }
  let end = messages;
  while (end > 0 && hasOpenToolCalls(history.slice(Math.max(0, end - 40), end))) end--;
  return history.slice(0, end);
}

/** The child: one cold call between two markers, then the live heap (printed as JSON). */
async function child(tree: string, messages: number, fresh: boolean): Promise<void> {
  const gc = globalThis.gc as () => void;
  const { CompactManager } = (await import(
    pathToFileURL(path.join(tree, 'src/index.ts')).href
  )) as typeof import('../src/index.js');
  // A JSON round trip: objects as read from a database, none shared with the generator.
  const json = JSON.stringify(await longHistory(tree, messages));
  let history = fresh ? [] : (JSON.parse(json) as unknown[]);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 20_000_000 });
  await manager.ready();
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  if (fresh) history = JSON.parse(json) as unknown[];
  process.stdout.write(`${START}\n`);
  const started = performance.now();
  await manager.compact('cold', history);
  const callMs = performance.now() - started;
  await manager.flush();
  process.stdout.write(`${END}\n`);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const tokens = (await manager.compact('cold', history)).tokensBefore;
  process.stdout.write(
    `${JSON.stringify({ messages: history.length, tokens, heapMb: (after - before) / 2 ** 20, callMs })}\n`,
  );
}

interface Run {
  scavenges: number;
  totalMs: number;
  maxMs: number;
  survivedMb: number;
  promotedMb: number;
  /**
   * The most bytes one scavenge moved (copied inside the young generation plus promoted out
   * of it): what the longest pause is made of, counted in bytes, so not subject to the load.
   */
  maxMovedMb: number;
  heapMb: number;
  messages: number;
  tokens: number;
  /** Wall time of the cold call (its answer, before the work it leaves for later). */
  callMs: number;
}

/** The scavenges between the markers of one child's output. */
function readRun(stdout: string): Run {
  const lines = stdout.split('\n');
  const from = lines.indexOf(START);
  const to = lines.indexOf(END);
  const field = (line: string, name: string) =>
    Number(new RegExp(`\\b${name}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  const run: Run = {
    scavenges: 0,
    totalMs: 0,
    maxMs: 0,
    survivedMb: 0,
    promotedMb: 0,
    maxMovedMb: 0,
    heapMb: 0,
    messages: 0,
    tokens: 0,
    callMs: 0,
  };
  for (const line of lines.slice(from + 1, to)) {
    if (!/\bgc=s\b/.test(line)) continue;
    const pause = field(line, 'pause');
    run.scavenges++;
    run.totalMs += pause;
    run.maxMs = Math.max(run.maxMs, pause);
    const survived = field(line, 'new_space_survived') / 2 ** 20;
    const promoted = field(line, 'promoted') / 2 ** 20;
    run.survivedMb += survived;
    run.promotedMb += promoted;
    run.maxMovedMb = Math.max(run.maxMovedMb, survived + promoted);
  }
  const summary = JSON.parse(lines.filter((l) => l.startsWith('{')).at(-1) ?? '{}') as Partial<Run>;
  return {
    ...run,
    heapMb: summary.heapMb ?? Number.NaN,
    messages: summary.messages ?? 0,
    tokens: summary.tokens ?? 0,
    callMs: summary.callMs ?? Number.NaN,
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

async function parent(): Promise<void> {
  const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const messages = Number(arg('messages') ?? 16_000);
  const runs = Number(arg('runs') ?? 3);
  const against = arg('against');
  const trees = against === undefined ? [here] : [path.resolve(against), here];
  const script = fileURLToPath(import.meta.url);
  // `--serial`: scavenges on the main thread alone, so that a pause is the collector's work and
  // not a wait for helper threads the OS has descheduled (steadier on a loaded machine).
  const gcFlags = process.argv.includes('--serial') ? ['--single-threaded-gc'] : [];
  const results = new Map<string, Run[]>(trees.map((tree) => [tree, []]));
  console.log(
    `uptime: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (load 1/5/15 min), ${os.cpus().length} cores`,
  );
  for (let run = 0; run < runs; run++) {
    for (const tree of trees) {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          ...gcFlags,
          '--expose-gc',
          '--trace-gc-nvp',
          '--import',
          'tsx',
          script,
          '--child',
          `--tree=${tree}`,
          `--messages=${messages}`,
          ...(process.argv.includes('--fresh') ? ['--fresh'] : []),
        ],
        { maxBuffer: 256 * 2 ** 20 },
      );
      const figures = readRun(stdout);
      results.get(tree)?.push(figures);
      console.log(`  ${tree === here ? 'this' : 'against'} run ${run + 1}: ${format(figures)}`);
    }
  }
  for (const tree of trees) {
    const each = results.get(tree) ?? [];
    const pick = (key: keyof Run) => median(each.map((r) => r[key]));
    const row: Run = {
      scavenges: pick('scavenges'),
      totalMs: pick('totalMs'),
      maxMs: pick('maxMs'),
      survivedMb: pick('survivedMb'),
      promotedMb: pick('promotedMb'),
      maxMovedMb: pick('maxMovedMb'),
      heapMb: pick('heapMb'),
      messages: pick('messages'),
      tokens: pick('tokens'),
      callMs: pick('callMs'),
    };
    console.log(
      `${tree === here ? 'this   ' : 'against'} median of ${each.length}: ${format(row)}  (${tree})`,
    );
  }
}

const format = (r: Run) =>
  `${r.messages} messages, ${(r.tokens / 1e6).toFixed(2)}M tokens: ${r.scavenges} scavenges, total ${r.totalMs.toFixed(1)} ms, max ${r.maxMs.toFixed(1)} ms, survived ${r.survivedMb.toFixed(1)} MB (copied or promoted), promoted ${r.promotedMb.toFixed(1)} MB, most moved by one ${r.maxMovedMb.toFixed(2)} MB, live heap +${r.heapMb.toFixed(1)} MB, call ${r.callMs.toFixed(0)} ms`;

if (process.argv.includes('--child'))
  await child(arg('tree') ?? '.', Number(arg('messages') ?? 16_000), process.argv.includes('--fresh'));
else await parent();

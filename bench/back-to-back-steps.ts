/**
 * Where a warm appended call goes (issue 47 point 5): a loop of warm calls on the scale
 * bench's tool session (bench/speed.ts `--speed-only=scale`), one message appended per call,
 * back to back (no turn of the event loop between calls) or with a turn (`--turn`), printed
 * beside the tokenize-only floor and the fresh array of the result's length in the same heap.
 *
 *   npx tsx bench/back-to-back-steps.ts --size=1000 [--calls=2000] [--turn] [--profile=/tmp/x.cpuprofile]
 *   npx tsx bench/back-to-back-steps.ts --summarize=/tmp/x.cpuprofile
 *   npx tsx bench/back-to-back-steps.ts --size=100000 --from=dist [--reads]
 *
 * Besides the median (of the last three quarters of the calls) it prints the 10th and 25th
 * percentiles (less moved by other processes' load), the collections during the loop (minor:
 * scavenges; major: mark-compacts; a call that allocates O(n) shows as more of them per call),
 * and how many elements of the caller's history the calls read, per call (the history is read
 * through a counting Proxy: a call that scans the history shows as reads growing with `--size`;
 * the Proxy slows the calls, so the times of that run are not comparable to the others: it runs
 * alone, with `--reads`).
 *
 * `--profile` records a CPU profile (50 us samples) of the loop only (not the session's first,
 * cold call); `--summarize` lists each function of src/ by its inclusive share of the
 * profile's busy samples: which steps run on a warm call and what each costs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { copyFloor, median, newMessage, sessionOf, tokenizeFloor } from './support/warm-floors.js';

const flag = (name: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ??
  (process.argv.includes(`--${name}`) ? '' : undefined);
/**
 * `--from=<dir>`: the manager of a built package (e.g. `dist`, or a copy of it with a temporary
 * patch) instead of src/, to alternate an old and a new build in one sitting.
 */
const from = flag('from');
const { CompactManager } = (
  from ? await import(pathToFileURL(resolve(from, 'index.js')).href) : await import('../src/index.js')
) as typeof import('../src/index.js');
const us = (ms: number) => `${(1000 * ms).toFixed(1)} us`;

/**
 * Counts the collections that start between `from` and `to` (performance.now() times; the
 * observer's entries come in a later turn of the loop, so they are filtered by time).
 */
function gcCounter() {
  const counts = { minor: 0, major: 0, from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.startTime < counts.from || entry.startTime > counts.to) continue;
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.major++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return { counts, stop: () => observer.disconnect() };
}

/** `history` read through a Proxy counting the reads of its elements while `counting` is set. */
function countingReads(history: unknown[]) {
  const counts = { reads: 0, counting: false };
  const proxy = new Proxy(history, {
    get(target, key, receiver) {
      if (counts.counting && typeof key === 'string' && key.length > 0 && key <= '9' && key >= '0')
        counts.reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { counts, proxy };
}

async function loop(size: number, calls: number, turn: boolean, profile?: string): Promise<void> {
  const floor = tokenizeFloor(400);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  const history = sessionOf(size, 3, 200);
  const reading = flag('reads') !== undefined ? countingReads(history) : undefined;
  const given = reading?.proxy ?? history;
  await manager.compact('steps', given);
  // A few calls before the measured ones: what the first warm calls finish is not per call.
  for (let i = 0; i < 50; i++) {
    history.push(newMessage());
    await manager.preflight('steps', given);
    if (turn) await new Promise((resolve) => setImmediate(resolve));
  }
  const gc = gcCounter();
  gc.counts.from = performance.now();
  if (reading) reading.counts.counting = true;
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    history.push(newMessage());
    const t = performance.now();
    await manager.preflight('steps', given);
    times.push(performance.now() - t);
    if (turn) await new Promise((resolve) => setImmediate(resolve));
  }
  if (session && profile) {
    const { profile: recorded } = await session.post('Profiler.stop');
    writeFileSync(profile, JSON.stringify(recorded));
    session.disconnect();
  }
  gc.counts.to = performance.now();
  if (reading) reading.counts.counting = false;
  // The observer's entries come in a later turn.
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc.stop();
  const measured = times.slice(Math.floor(calls / 4)).sort((a, b) => a - b);
  const at = (share: number) => measured[Math.floor(measured.length * share)]!;
  const call = median(measured);
  const copy = copyFloor(history);
  await manager.shutdown();
  console.log(
    `${size.toLocaleString('en')} messages, ${turn ? 'a loop turn between calls' : 'back to back'}: ` +
      `call ${us(call)} = ${(call / floor).toFixed(1)}x the tokenize-only floor (${us(floor)}); ` +
      `p10 ${us(at(0.1))}, p25 ${us(at(0.25))}; ` +
      `a fresh array of the result's length, same heap: ${us(copy)}; ` +
      `collections in ${calls} calls: ${gc.counts.minor} minor, ${gc.counts.major} major` +
      (reading ? `; history elements read per call: ${(reading.counts.reads / calls).toFixed(1)}` : ''),
  );
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Inclusive share of the busy samples (not idle) per function of src/, and of the collector. */
function summarize(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const nameOf = (node: ProfileNode) =>
    node.callFrame.url.includes('/src/')
      ? `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/src/')[1]}`
      : node.callFrame.url === '' && node.callFrame.functionName.startsWith('(')
        ? node.callFrame.functionName
        : undefined;
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (let k = 0; k < profile.samples.length; k++) {
    if (byId.get(profile.samples[k]!)!.callFrame.functionName !== '(idle)')
      busy += profile.timeDeltas[k] ?? 0;
    const seen = new Set<string>();
    for (let id: number | undefined = profile.samples[k]; id !== undefined; id = parent.get(id)) {
      const name = nameOf(byId.get(id)!);
      if (name === undefined || seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + (profile.timeDeltas[k] ?? 0));
    }
  }
  for (const [name, time] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 50))
    if (name !== '(idle)') console.log(`${((100 * time) / busy).toFixed(1).padStart(6)}%  ${name}`);
}

const dir = flag('summarize');
if (dir) summarize(dir);
else
  await loop(
    Number(flag('size') ?? 1_000),
    Number(flag('calls') ?? 2_000),
    flag('turn') !== undefined,
    flag('profile'),
  );

/**
 * `npx tsx bench/gc-blocks.ts [--runs=10] [--paths=a,b] [--against=DIR]`: every block over 20 ms
 * of a path (bench/path-blocks.ts's paths), put down to a GC pause or to our code by V8's own
 * `--trace-gc` lines (issue 47 point 2).
 *
 * Each run is a fresh child process under `--trace-gc`. The child runs the path with a turn
 * sampler (as bench/block-monitor.ts: `setImmediate` ticks, the main thread's CPU per gap from
 * schedstat) that writes a marker line to stdout at every turn of the loop; V8 writes its
 * trace line of each collection to the same stdout, synchronously, during the pause. So the
 * trace lines between two markers are the collections inside that gap, and a gap's CPU less
 * their pauses is what our code held. A gap over 20 ms is "gc" when it would be under 20 ms
 * without its pauses, "ours" otherwise.
 *
 * `--against=DIR`: another checkout (e.g. `git archive main` with this bench folder copied in
 * and `node_modules` linked), run alternately with this one, run by run.
 * Prints per path and side: the longest block per run, its median, the runs over 20 ms, and
 * per run over 20 ms its GC share and the collections' kinds.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TARGET_MS = 20;
const MARK = '@@gap';
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const buffer = Buffer.alloc(128);
let fd: number | undefined;
try {
  fd = openSync(schedstat, 'r');
} catch {
  fd = undefined;
}
function threadCpuMs(): number {
  if (fd !== undefined) {
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString('latin1', 0, read);
    return Number(text.slice(0, text.indexOf(' '))) / 1e6;
  }
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** A watch for path-blocks' paths: a marker per turn of the loop (CPU and wall of the gap). */
async function markedWatch(label: string, work: () => Promise<unknown>) {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let threadMs = 0;
  let done = false;
  const gap = () => {
    const now = performance.now();
    const cpu = threadCpuMs();
    threadMs = Math.max(threadMs, cpu - lastCpu);
    writeSync(1, `${MARK} ${(cpu - lastCpu).toFixed(2)} ${(now - last).toFixed(2)}\n`);
    last = performance.now();
    lastCpu = threadCpuMs();
  };
  const tick = () => {
    if (done) return;
    gap();
    setImmediate(tick);
  };
  writeSync(1, `${MARK}-start\n`);
  setImmediate(tick);
  try {
    await work();
  } finally {
    gap();
    done = true;
    writeSync(1, `${MARK}-end\n`);
  }
  return {
    path: label,
    threadMs,
    wallMs: 0,
    workMs: 0,
    netMs: 0,
    gcMs: 0,
    gcKind: '',
    threadOnly: fd !== undefined,
    delayMaxMs: 0,
    turns: 0,
  };
}

interface Gap {
  cpu: number;
  wall: number;
  gcMs: number;
  kinds: string[];
}

/** Gaps over the target (and the longest gap) of one child's output. */
function parse(stdout: string): { longest: Gap; over: Gap[]; gcTotal: number; scavenges: number } {
  let inside = false;
  let pending: { ms: number; kind: string }[] = [];
  let longest: Gap = { cpu: 0, wall: 0, gcMs: 0, kinds: [] };
  const over: Gap[] = [];
  let gcTotal = 0;
  let scavenges = 0;
  for (const line of stdout.split('\n')) {
    if (line === `${MARK}-start`) {
      inside = true;
      pending = [];
      continue;
    }
    if (line === `${MARK}-end`) {
      inside = false;
      continue;
    }
    const trace = /\d+ ms: ([A-Za-z-]+)[^,]*, ([\d.]+) \/ [\d.]+ ms/.exec(line);
    if (trace) {
      if (inside) {
        pending.push({
          ms: Number(trace[2]),
          kind: line.slice(line.indexOf(' ms: ') + 5, line.indexOf(' ms ', line.indexOf(' ms: ') + 5)),
        });
        gcTotal += Number(trace[2]);
        if (trace[1] === 'Scavenge') scavenges++;
      }
      continue;
    }
    if (!line.startsWith(`${MARK} `)) continue;
    const [, cpu, wall] = line.split(' ').map(Number) as [number, number, number];
    const gap: Gap = {
      cpu,
      wall,
      gcMs: pending.reduce((sum, p) => sum + p.ms, 0),
      kinds: pending.map((p) => p.kind),
    };
    pending = [];
    if (cpu > longest.cpu) longest = gap;
    if (cpu > TARGET_MS) over.push(gap);
  }
  return { longest, over, gcTotal, scavenges };
}

const verdict = (gap: Gap) => (gap.cpu - gap.gcMs <= TARGET_MS ? 'gc' : 'ours');

async function child(name: string): Promise<void> {
  const { PATHS } = await import('./path-blocks.js');
  const run = PATHS[name];
  if (!run) throw new Error(`unknown path ${name}`);
  await run(markedWatch as never);
  process.exit(0);
}

async function runChild(tree: string, name: string): Promise<ReturnType<typeof parse>> {
  const script = path.join(tree, 'bench/gc-blocks.ts');
  // The child's stdout is a file: a pipe the parent reads late fills, and a marker's
  // synchronous write to it fails (EAGAIN).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gc-blocks-'));
  const file = path.join(dir, 'out');
  const out = openSync(file, 'w');
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--trace-gc', '--import', 'tsx', script, `--case=${name}`], {
        cwd: tree,
        stdio: ['ignore', out, 'inherit'],
      });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} exited ${code}`))));
    });
    return parse(readFileSync(file, 'utf8'));
  } finally {
    closeSync(out);
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

async function main(): Promise<void> {
  const runs = Number(arg('runs') ?? 10);
  const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const against = arg('against');
  const trees = against
    ? [['new', here] as const, ['old', path.resolve(against)] as const]
    : [['this', here] as const];
  const names = arg('paths')?.split(',') ?? ['core-cold-unknown-20k'];
  console.log(`gc-blocks: ${runs} runs per path and tree, alternated; load ${os.loadavg()[0]!.toFixed(1)}`);
  for (const name of names) {
    const results = new Map<string, ReturnType<typeof parse>[]>(trees.map(([side]) => [side, []]));
    for (let i = 0; i < runs; i++)
      for (const [side, tree] of i % 2 ? [...trees].reverse() : trees)
        results.get(side)!.push(await runChild(tree, name));
    for (const [side, rows] of results) {
      const blocks = rows.map((row) => row.longest.cpu);
      const over = rows.filter((row) => row.longest.cpu > TARGET_MS);
      console.log(
        `  ${name} ${side}: longest block median ${median(blocks).toFixed(1)} ms, over ${TARGET_MS}: ${over.length}/${rows.length} (runs ${blocks.map((b) => b.toFixed(1)).join(' ')}); scavenges median ${median(rows.map((r) => r.scavenges))}, GC total median ${median(rows.map((r) => r.gcTotal)).toFixed(0)} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
      for (const row of rows)
        for (const gap of row.over)
          console.log(
            `    ${gap.cpu.toFixed(1)} ms CPU (wall ${gap.wall.toFixed(1)}): ${verdict(gap)}, GC ${gap.gcMs.toFixed(1)} ms [${gap.kinds.join(', ')}]`,
          );
    }
  }
}

const name = arg('case');
if (name !== undefined) await child(name);
else if (import.meta.url === `file://${process.argv[1]}`) await main();

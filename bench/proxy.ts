/**
 * What the compacting proxy (`agent-compaction proxy`, src/proxy) adds to a request, printed by
 * `npm run bench` (`--no-proxy` skips it; `npx tsx bench/proxy.ts` runs it alone). Issue 49
 * point 5: at most 5 ms p99 per request at a 128k history besides the upstream's time, and a
 * stream's first byte not delayed.
 *
 * Method. Three processes besides this one (bench/proxy-child.ts), each with its own event loop
 * and heap: the upstream (a bare `node:http` provider that reads the body and answers at once),
 * the proxy in front of it, and the client. The client builds a Chat Completions history of
 * ~8k, ~32k and ~128k tokens (a synthetic coding session) and every body it will send before
 * the first call (a stateless client's: the whole history every call, one message more each
 * time). Each body is then posted three times, straight to the upstream, through a bare
 * relay (a fourth process: reads the body whole, resends it, pipes the answer back; no
 * parsing) and through the proxy, in turn (the order rotated call by call, so the proxy never
 * takes two calls in a row), over one kept `node:http` connection each, and the client
 * collects its own garbage between calls, never inside one. What the proxy adds is the
 * difference within each call (through less straight, to the answer's last byte): the
 * client, the loopback and the upstream are the same on every leg, so only the proxy's hop
 * remains (its receiving and resending the body included). The relay less straight is what
 * any hop that needs the whole body adds on this machine (two more loopback transfers of
 * ~600 KB, two more processes woken); the proxy less the relay is what the proxy's own work
 * adds over such a hop. p50, p95 and p99 are over the calls, after warm-up calls (the proxy
 * warm, below its trigger: the common call). `added` is also split by leg on the machine's
 * monotonic clock, shared by the processes (the upstream stamps its first and last body
 * byte in an answer header; the proxy's log lines give its handler, last byte in, upstream
 * write and first byte back). A body the proxy forwards while it arrives (src/proxy/upstream/early-forward.ts)
 * reaches the upstream before the proxy's "upstream write", which is then the release of its
 * held end: the "proxy write -> upstream's first byte" leg is negative. Beside the pairwise
 * differences, each quantile through the proxy (and the relay) less the straight call's.
 *
 * Scheduling. On a loaded 2-core machine a process woken by a byte waits its turn behind the
 * machine's other work, and that wait (milliseconds at a load of 10) lands in the difference
 * (a proxied call wakes two more processes than a straight one). `PROXY_BENCH_PRIORITY=fifo`
 * runs the bench's processes under real-time scheduling during the calls (bench/proxy-priority.ts,
 * where the bench may use it); the rows say how they were scheduled, and the load average is
 * printed too. The relay row holds either way: it pays the same waits as the proxy.
 *
 * The proxy's own timing (its log lines, `performance.now()` in its process): `forward`, from
 * the request's last byte received to its first byte handed to the upstream's connection;
 * `return`, from the upstream's answer head received to the answer's first byte written to the
 * client; and what lies between (`parse`, `compact`). For streams the upstream sends a first
 * event at once and the rest 50 ms later: the first byte through the proxy less straight
 * (pairs as above) must not include those 50 ms. The floor is `JSON.parse` of the 128k body
 * decoded from bytes, timed in the proxy's process after the calls: what a proxy that parsed
 * each body whole would pay at least. The load average is printed beside the figures; on a
 * loaded machine p99 is the machine's (a process waiting for a core), so read it with `uptime`.
 *
 * The proxy's CPU in `forward` (`process.cpuUsage()`: all its threads, V8's concurrent marking
 * included) is printed over all calls, over those the manager did not compact, and over those
 * with no main-thread GC pause in the span (`gc` performance entries, matched to each span by
 * bench/proxy-child.ts), each against the 5 ms target; then the top 1% of calls by CPU with
 * where their time went (parse, compact, GC pause).
 *
 * `PROXY_BENCH_MODULE=<path>` measures another build of src/proxy (a copy of an older one, its
 * path from bench/); `PROXY_BENCH_BEFORE=<path>` measures that build, then this one, in one run;
 * `PROXY_BENCH_FRESH_CALLS` (10) conversations new to the proxy are sent last at the largest size; `PROXY_BENCH_PROF=<dir>` writes the proxy process's CPU profile there;
 * `PROXY_BENCH_SIZES`, `PROXY_BENCH_CALLS`, `PROXY_BENCH_STREAM_CALLS` change the run;
 * `PROXY_BENCH_NODE_FLAGS` adds Node flags to the proxy's process (`--trace-gc`);
 * `PROXY_BENCH_THREADS=1` prints the proxy's CPU per thread over the calls (Linux);
 * `PROXY_BENCH_THREAD_CPU=1` counts the CPU in the spans on the proxy's main thread only (Linux);
 * `PROXY_BENCH_LOG=<path>` writes each size's log lines (with `gcMs` and `forwardStart`, to match a
 * call to `--trace-gc --trace-incremental-marking` lines) to `<path>-<tokens>.json`. The proxy's
 * process runs with the young-generation cap `agent-compaction proxy` gives its own
 * (src/cli/respawn-with-heap-flags.ts) unless those flags set `--max-semi-space-size`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { heapFlagsToAdd } from '../src/cli/respawn-with-heap-flags.js';
import type { ProxyLogEntry } from '../src/proxy/index.js';
import { type BenchLogFields, type ClientResult, REST_DELAY_MS } from './proxy-child.js';
import type { ProxyBenchFigures, ProxySizeFigures, Spread } from './proxy-figures.js';
import { printProxyBench } from './proxy-print.js';
import { prioritize, priorityMode, setPriorityMode } from './proxy-priority.js';

export type { ProxyBenchFigures, ProxySizeFigures, SlowCall, Spread } from './proxy-figures.js';

const CALLS = Number(process.env.PROXY_BENCH_CALLS ?? 400);
const STREAM_CALLS = Number(process.env.PROXY_BENCH_STREAM_CALLS ?? 100);
const FRESH_CALLS = Number(process.env.PROXY_BENCH_FRESH_CALLS ?? 10);
const SIZES = (process.env.PROXY_BENCH_SIZES ?? '8000,32000,128000').split(',').map(Number);
const WARM_UP = 10;

export { TARGET_P99_MS } from './proxy-print.js';

const percentile = (values: number[], p: number) =>
  values.length === 0
    ? Number.NaN
    : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

const spread = (values: number[]): Spread => ({
  p50: percentile(values, 0.5),
  p95: percentile(values, 0.95),
  p99: percentile(values, 0.99),
});

interface Child {
  process: ChildProcess;
  url: string;
  /** Rejects when the child ends before it is told to. */
  ended: Promise<never>;
  ask<T>(message: unknown, key: string): Promise<T>;
}

async function start(args: string[], execArgv: string[] = []): Promise<Child> {
  const child = fork(new URL('./proxy-child.ts', import.meta.url), args, {
    stdio: 'inherit',
    execArgv: [...process.execArgv, ...execArgv],
  });
  // A child that ends before it is told to fails whatever waits on it (and so the run).
  const ended = new Promise<never>((_, reject) =>
    child.on('exit', (code, signal) => {
      if (code !== 0 || signal !== null)
        reject(new Error(`bench/proxy-child ${args[0]} ended: ${signal ?? `exit code ${code}`}`));
    }),
  );
  ended.catch(() => {});
  // A message to a child that just ended: its failure is `ended`'s to report.
  child.on('error', () => {});
  const next = (key: string) =>
    Promise.race([
      ended,
      new Promise<Record<string, unknown>>((resolve) => {
        const on = (message: Record<string, unknown>) => {
          if (!(key in message)) return;
          child.off('message', on);
          resolve(message);
        };
        child.on('message', on);
      }),
    ]);
  const { url } = (await next(args[0] === 'client' ? 'ready' : 'url')) as { url: string };
  return {
    process: child,
    url,
    ended,
    ask: async <T>(message: unknown, key: string) => {
      const reply = next(key);
      child.send(message as object);
      return (await reply)[key] as T;
    },
  };
}

async function measureSize(
  tokens: number,
  children: { upstream: Child; proxy: Child; client: Child; relay: Child },
  last: boolean,
): Promise<ProxySizeFigures> {
  const { upstream, proxy, client, relay } = children;
  const streamCalls = last ? STREAM_CALLS : 0;
  const freshCalls = last ? FRESH_CALLS : 0;
  await proxy.ask({ logs: true }, 'logs');
  let cpuBefore = 0;
  const warmed = (message: { warmed?: true }) => {
    if (!message.warmed) return;
    client.process.off('message', warmed);
    void proxy.ask<number>({ cpu: true }, 'cpu').then((cpu) => {
      cpuBefore = cpu;
      scheduling = prioritize(pids, true);
      client.process.send({ go: true });
    });
  };
  client.process.on('message', warmed);
  const firstBody = new Promise<string>((resolve) => {
    const on = (message: { first?: string }) => {
      if (message.first === undefined) return;
      client.process.off('message', on);
      resolve(message.first);
    };
    client.process.on('message', on);
  });
  const run = {
    tokens,
    calls: CALLS,
    streamCalls,
    freshCalls,
    warmUp: WARM_UP,
    upstream: upstream.url,
    proxy: proxy.url,
    relay: relay.url,
  };
  const pids = {
    proxy: proxy.process.pid!,
    others: [upstream, client, relay].map((child) => child.process.pid!),
  };
  let scheduling = '';
  const result = await client.ask<ClientResult>({ run }, 'pairs').finally(() => prioritize(pids, false));
  const cpu =
    ((await proxy.ask<number>({ cpu: true }, 'cpu')) - cpuBefore) / (CALLS + streamCalls + freshCalls);
  const all = (await proxy.ask<(ProxyLogEntry & BenchLogFields)[]>({ logs: true }, 'logs')).slice(WARM_UP);
  const logs = all.slice(0, CALLS + streamCalls);
  const freshLogs = all.slice(CALLS + streamCalls);
  const whole = logs.slice(0, CALLS);
  if (process.env.PROXY_BENCH_LOG)
    writeFileSync(`${process.env.PROXY_BENCH_LOG}-${tokens}.json`, JSON.stringify(logs));
  const of = (entries: ProxyLogEntry[], key: keyof ProxyLogEntry) =>
    spread(entries.map((entry) => Number(entry[key] ?? Number.NaN)));
  const uncompacted = logs.filter((entry) => entry.applied !== true);
  const quiet = uncompacted.filter((entry) => entry.gcMs === 0);
  const paused = logs.filter((entry) => entry.gcMs > 0);
  const pairs = result.pairs;
  const plain = pairs.filter((pair) => !pair.stream && !pair.fresh);
  const streams = pairs.filter((pair) => pair.stream);
  const freshPairs = pairs.filter((pair) => pair.fresh);
  const floorBody = await firstBody;
  return {
    scheduling,
    historyTokens: result.historyTokens,
    messages: result.messages,
    bodyBytes: result.bodyBytes,
    calls: CALLS,
    cpu,
    direct: spread(plain.map((pair) => pair.direct.total)),
    added: spread(plain.map((pair) => pair.through.total - pair.direct.total)),
    relayAdded: spread(plain.map((pair) => pair.relayed.total - pair.direct.total)),
    through: spread(plain.map((pair) => pair.through.total)),
    relayed: spread(plain.map((pair) => pair.relayed.total)),
    overRelay: spread(plain.map((pair) => pair.through.total - pair.relayed.total)),
    addedParts: {
      toUpstream: spread(plain.map((pair) => pair.through.upstreamFirst - pair.direct.upstreamFirst)),
      upstreamRead: spread(
        plain.map(
          (pair) =>
            pair.through.upstreamLast -
            pair.through.upstreamFirst -
            (pair.direct.upstreamLast - pair.direct.upstreamFirst),
        ),
      ),
      back: spread(
        plain.map(
          (pair) =>
            pair.through.total - pair.through.upstreamLast - (pair.direct.total - pair.direct.upstreamLast),
        ),
      ),
      written: spread(plain.map((pair) => pair.through.written - pair.direct.written)),
      toHandler: spread(plain.map((pair, i) => whole[i]!.handlerAt - pair.through.startedAt)),
      proxyToUpstream: spread(
        plain.map((pair, i) => pair.through.startedAt + pair.through.upstreamFirst - whole[i]!.upstreamAt),
      ),
      directToUpstream: spread(plain.map((pair) => pair.direct.upstreamFirst)),
    },
    reused: percentile(
      whole.map((entry) => entry.reused ?? 0),
      0.5,
    ),
    forward: of(logs, 'forwardMs'),
    forwardCpu: of(logs, 'forwardCpuMs'),
    forwardCpuNoCompaction: of(uncompacted, 'forwardCpuMs'),
    forwardCpuQuiet: of(quiet, 'forwardCpuMs'),
    compactions: logs.length - uncompacted.length,
    gcCalls: paused.length,
    gcMs: spread(paused.map((entry) => entry.gcMs)),
    slowest: [...logs]
      .sort((a, b) => (b.forwardCpuMs ?? 0) - (a.forwardCpuMs ?? 0))
      .slice(0, Math.max(1, Math.ceil(logs.length / 100)))
      .map((entry) => ({
        cpu: entry.forwardCpuMs ?? Number.NaN,
        wall: entry.forwardMs ?? Number.NaN,
        parse: entry.parseMs ?? Number.NaN,
        compact: entry.compactMs ?? Number.NaN,
        gcPause: entry.gcMs,
        reused: entry.reused ?? 0,
        compacted: entry.applied === true,
      })),
    parse: of(whole, 'parseMs'),
    compact: of(whole, 'compactMs'),
    back: of(logs, 'returnMs'),
    read: of(logs, 'readMs'),
    streamCalls,
    ...(last
      ? {
          firstByteDirect: spread(streams.map((pair) => pair.direct.first)),
          firstByteAdded: spread(streams.map((pair) => pair.through.first - pair.direct.first)),
          firstByteRelayAdded: spread(streams.map((pair) => pair.relayed.first - pair.direct.first)),
          firstBeforeRest: streams.filter(
            (pair) => pair.through.first < pair.through.total - REST_DELAY_MS / 2,
          ).length,
          floor: spread(await proxy.ask<number[]>({ floor: true, body: floorBody, repeat: 30 }, 'floor')),
          fresh: {
            calls: freshCalls,
            added: spread(freshPairs.map((pair) => pair.through.total - pair.direct.total)),
            forwardCpu: of(freshLogs, 'forwardCpuMs'),
            parse: of(freshLogs, 'parseMs'),
            compact: of(freshLogs, 'compactMs'),
          },
        }
      : {}),
  };
}

/** Runs the bench (a minute or two on a quiet machine). */
export async function proxyBench(module = process.env.PROXY_BENCH_MODULE): Promise<ProxyBenchFigures> {
  const asked = priorityMode();
  try {
    return await proxyRun(module);
  } catch (error) {
    if (asked !== 'fifo') throw error;
    // The real-time guard stopped a process (or it failed otherwise): once more, not raised.
    console.log(`  (${(error as Error).message} under SCHED_FIFO: run again at normal priority)`);
    setPriorityMode('none');
    try {
      return await proxyRun(module);
    } finally {
      setPriorityMode(asked);
    }
  }
}

async function proxyRun(module: string | undefined): Promise<ProxyBenchFigures> {
  const before = loadavg();
  const upstream = await start(['upstream']);
  const profile = process.env.PROXY_BENCH_PROF;
  const given = process.env.PROXY_BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? [];
  const flags = [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    // The heap flag `agent-compaction proxy` starts its process with, unless the run gives its own.
    ...(heapFlagsToAdd(given, {}) ?? []),
    ...given,
  ];
  const proxy = await start(['proxy', upstream.url, ...(module ? [module] : [])], flags);
  const client = await start(['client'], ['--expose-gc']);
  const relay = await start(['relay', upstream.url]);
  const children = { upstream, proxy, client, relay };
  const sizes: ProxySizeFigures[] = [];
  try {
    for (const tokens of SIZES) {
      const size = measureSize(tokens, children, tokens === SIZES.at(-1));
      sizes.push(await Promise.race([size, upstream.ended, proxy.ended, client.ended, relay.ended]));
    }
  } finally {
    for (const child of Object.values(children))
      if (child.process.connected) child.process.send({ close: true });
      else child.process.kill();
  }
  return { load: before, loadAfter: loadavg(), sizes };
}

export { printProxyBench } from './proxy-print.js';

if (import.meta.url === `file://${process.argv[1]}`) {
  // `PROXY_BENCH_BEFORE=<path>`: that build first, then this one, in one run.
  const before = process.env.PROXY_BENCH_BEFORE;
  if (before) {
    console.log(`before (${before}):`);
    printProxyBench(await proxyBench(before));
    console.log('after (this build):');
  }
  printProxyBench(await proxyBench());
}

/**
 * What the compacting proxy (`agent-compaction proxy`, src/proxy) adds to a request, printed by
 * `npm run bench` (`--no-proxy` skips it; `npx tsx bench/proxy.ts` runs it alone).
 *
 * Three processes, as in a deployment: this one is the client; the upstream (a bare
 * `node:http` provider that reads the body and answers at once) and the proxy in front of it
 * run in their own (bench/proxy-child.ts). A Chat Completions history of ~8k, ~32k and ~128k
 * tokens (a synthetic coding session) is posted as a stateless client does, the whole history
 * every call, growing by one message per call; each call goes straight to the upstream and
 * through the proxy (in turn, which first alternating), warm and below the trigger (the common
 * call). What the proxy adds is the difference within each pair. The floor is `JSON.parse` of
 * the same body decoded from bytes, timed in the proxy's process in the same run: a proxy that
 * parses each body whole pays at least that. The breakdown is the proxy's own log lines. For
 * streams the upstream sends a first event at once and the rest 50 ms later: the time to the
 * first byte through the proxy against straight, which must not include those 50 ms.
 *
 * `PROXY_BENCH_MODULE=<path>` measures another build of src/proxy (a copy of an older one, its
 * path from bench/); `PROXY_BENCH_PROF=<dir>` writes the proxy process's CPU profile there;
 * `PROXY_BENCH_SIZES`, `PROXY_BENCH_CALLS`, `PROXY_BENCH_STREAM_CALLS` change the run.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { CompactManager } from '../src/index.js';
import type { ProxyLogEntry } from '../src/proxy/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';
import { REST_DELAY_MS } from './proxy-child.js';

const CALLS = Number(process.env.PROXY_BENCH_CALLS ?? 200);
const STREAM_CALLS = Number(process.env.PROXY_BENCH_STREAM_CALLS ?? 60);
const SIZES = (process.env.PROXY_BENCH_SIZES ?? '8000,32000,128000').split(',').map(Number);
const WARM_UP = 10;

const percentile = (values: number[], p: number) =>
  values.length === 0
    ? Number.NaN
    : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/** A p50 and a p99 (milliseconds). */
export interface Spread {
  p50: number;
  p99: number;
}
const spread = (values: number[]): Spread => ({
  p50: percentile(values, 0.5),
  p99: percentile(values, 0.99),
});

/** The figures of one history size. */
export interface ProxySizeFigures {
  historyTokens: number;
  messages: number;
  bodyBytes: number;
  calls: number;
  /** CPU milliseconds of the proxy's process per request (user and system; the floor's timing left out). */
  cpu: number;
  direct: Spread;
  added: Spread;
  /** `JSON.parse` of the body decoded from bytes, in the proxy's process. */
  floor: Spread;
  /** Messages taken from the last body instead of parsed (median). */
  reused: number;
  read: Spread;
  parse: Spread;
  session: Spread;
  compact: Spread;
  serialize: Spread;
  prepare: Spread;
  /** The upstream's answer head through the proxy less straight (median of the differences). */
  forward: number;
  firstByteDirect?: Spread;
  firstByteAdded?: Spread;
}

/** The proxy's figures. */
export interface ProxyBenchFigures {
  load: number[];
  sizes: ProxySizeFigures[];
}

interface Child {
  process: ChildProcess;
  url: string;
  ask<T>(message: unknown, key: string): Promise<T>;
}

async function start(args: string[]): Promise<Child> {
  const profile = process.env.PROXY_BENCH_PROF;
  const execArgv = [...process.execArgv];
  if (profile && args[0] === 'proxy') execArgv.push('--cpu-prof', `--cpu-prof-dir=${profile}`);
  const child = fork(new URL('./proxy-child.ts', import.meta.url), args, { stdio: 'inherit', execArgv });
  const next = (key: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const on = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        child.off('message', on);
        resolve(message);
      };
      child.on('message', on);
    });
  const { url } = (await next('url')) as { url: string };
  return {
    process: child,
    url,
    ask: async <T>(message: unknown, key: string) => {
      const reply = next(key);
      child.send(message as object);
      return (await reply)[key] as T;
    },
  };
}

function history(manager: CompactManager, tokens: number): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let seed = 11; manager.estimate(messages, { format: 'openai-chat' }).total < tokens; seed++) {
    const part = syntheticSession({ turns: 2, seed, toolDensity: 3, resultChars: 3_300 });
    for (const { meta: _libraryOnly, ...message } of part)
      if (message.role !== 'system' || messages.length === 0) messages.push(message);
  }
  return messages;
}

const bodyOf = (messages: unknown[], stream: boolean) =>
  Buffer.from(`{"stream":${stream},"model":"gpt-4o","messages":${JSON.stringify(messages)}}`);

/** Posts `body`; resolves with the wall time, the time to the answer's head and to its first body byte. */
async function post(base: string, body: Buffer): Promise<{ total: number; head: number; first: number }> {
  const started = performance.now();
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body,
  });
  const head = performance.now() - started;
  const reader = response.body!.getReader();
  let first = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    if (first === 0) first = performance.now() - started;
  return { total: performance.now() - started, head, first };
}

async function measureSize(
  manager: CompactManager,
  tokens: number,
  upstream: Child,
  proxy: Child,
  streams: boolean,
): Promise<ProxySizeFigures> {
  const messages = history(manager, tokens);
  const historyTokens = manager.estimate(messages, { format: 'openai-chat' }).total;
  const count = messages.length;
  const first = bodyOf(messages, false);
  await proxy.ask({ floor: first.toString('utf8') }, 'ok');
  for (let i = 0; i < WARM_UP; i++) {
    messages.push({ role: 'user', content: `warm-up ${i}` });
    await post(proxy.url, bodyOf(messages, false));
  }
  await proxy.ask({ logs: true }, 'logs');
  const direct: number[] = [];
  const added: number[] = [];
  const heads: number[] = [];
  const floor: number[] = [];
  const firstDirect: number[] = [];
  const firstAdded: number[] = [];
  const total = CALLS + (streams ? STREAM_CALLS : 0);
  const cpuBefore = await proxy.ask<number>({ cpu: true }, 'cpu');
  for (let call = 0; call < total; call++) {
    messages.push({ role: 'user', content: `follow-up ${call}: run the tests again` });
    const stream = call >= CALLS;
    const body = bodyOf(messages, stream);
    let straight: Awaited<ReturnType<typeof post>>;
    let through: Awaited<ReturnType<typeof post>>;
    if (call % 2 === 0) {
      straight = await post(upstream.url, body);
      through = await post(proxy.url, body);
    } else {
      through = await post(proxy.url, body);
      straight = await post(upstream.url, body);
    }
    if (stream) {
      firstDirect.push(straight.first);
      firstAdded.push(through.first - straight.first);
    } else {
      direct.push(straight.total);
      added.push(through.total - straight.total);
      heads.push(straight.head);
      floor.push(...(await proxy.ask<number[]>({ floorOf: true, repeat: 1 }, 'floor')));
    }
  }
  const cpu = ((await proxy.ask<number>({ cpu: true }, 'cpu')) - cpuBefore) / total;
  const logs = (await proxy.ask<ProxyLogEntry[]>({ logs: true }, 'logs')).slice(0, CALLS);
  const of = (key: keyof ProxyLogEntry) => spread(logs.map((entry) => Number(entry[key] ?? 0)));
  return {
    historyTokens,
    messages: count,
    bodyBytes: first.length,
    calls: CALLS,
    cpu,
    direct: spread(direct),
    added: spread(added),
    floor: spread(floor),
    reused: percentile(
      logs.map((entry) => entry.reused ?? 0),
      0.5,
    ),
    read: of('readMs'),
    parse: of('parseMs'),
    session: of('sessionMs'),
    compact: of('compactMs'),
    serialize: of('serializeMs'),
    prepare: of('prepareMs'),
    forward: percentile(
      logs.flatMap((entry, i) => (entry.upstreamMs === undefined ? [] : [entry.upstreamMs - heads[i]!])),
      0.5,
    ),
    ...(streams ? { firstByteDirect: spread(firstDirect), firstByteAdded: spread(firstAdded) } : {}),
  };
}

/** Runs the bench (about a minute on a quiet machine). */
export async function proxyBench(): Promise<ProxyBenchFigures> {
  const upstream = await start(['upstream']);
  const module = process.env.PROXY_BENCH_MODULE;
  const proxy = await start(['proxy', upstream.url, ...(module ? [module] : [])]);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  await manager.ready();
  const sizes: ProxySizeFigures[] = [];
  try {
    for (const tokens of SIZES)
      sizes.push(await measureSize(manager, tokens, upstream, proxy, tokens === SIZES.at(-1)));
  } finally {
    proxy.process.send({ close: true });
    upstream.process.send({ close: true });
  }
  return { load: loadavg(), sizes };
}

/** Prints the bench's rows. */
export function printProxyBench(f: ProxyBenchFigures): void {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const both = (s: Spread) => `p50 ${ms(s.p50)}  p99 ${ms(s.p99)}`;
  console.log(`  load average ${f.load.map((value) => value.toFixed(2)).join(', ')} (2 cores)`);
  for (const s of f.sizes) {
    console.log(
      `  history ${s.historyTokens} tokens, ${s.messages} messages, ${(s.bodyBytes / 1024).toFixed(0)} KB; ${s.calls} calls (+1 message each), warm, below the trigger`,
    );
    console.log(`    straight to the upstream                ${both(s.direct)}`);
    console.log(`    added by the proxy                      ${both(s.added)}`);
    console.log(
      `    the proxy process's CPU per request     ${ms(s.cpu)} (mean; waiting for a core not counted)`,
    );
    console.log(
      `    floor: JSON.parse of the body            ${both(s.floor)}   added/floor p50 ${(s.added.p50 / s.floor.p50).toFixed(2)}  p99 ${(s.added.p99 / s.floor.p99).toFixed(2)}`,
    );
    console.log(
      `    the proxy's own work (log lines): read ${both(s.read)}; parse ${both(s.parse)} (${s.reused} messages reused, median)`,
    );
    console.log(
      `      session ${both(s.session)}; compact ${both(s.compact)}; serialize ${both(s.serialize)}`,
    );
    console.log(
      `      prepare (parse to body) ${both(s.prepare)}; forward (answer head through less straight) p50 ${ms(s.forward)}`,
    );
    if (s.firstByteDirect && s.firstByteAdded)
      console.log(
        `    stream: first byte straight ${both(s.firstByteDirect)}; added by the proxy ${both(s.firstByteAdded)} (the rest follows ${REST_DELAY_MS} ms later)`,
      );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printProxyBench(await proxyBench());

/**
 * The processes of bench/proxy.ts, each on its own event loop and heap as in a deployment;
 * each says `{ url }` (or `{ ready }`) over IPC once it is up.
 *
 * - `upstream`: a bare `node:http` provider that reads the body and answers at once, or
 *   streams a first event at once and the rest `REST_DELAY_MS` later.
 * - `proxy`: the compacting proxy in front of it. Answers `{ logs }` (its log lines, with its
 *   own timings), `{ cpu }` (CPU milliseconds used so far) and `{ floor }` (`JSON.parse` of a
 *   body decoded from bytes, timed in this process; asked once, after the measured calls).
 * - `client`: builds the history and its bodies (all of them before the first call), then
 *   sends each body straight to the upstream and through the proxy, in turn, over keep-alive
 *   `node:http` connections; answers `{ pairs }`.
 */
import { openSync, readSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { CompactManager } from '../src/index.js';
import type { ProxyLogEntry } from '../src/proxy/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

/** Milliseconds between a stream's first event and the rest. */
export const REST_DELAY_MS = 50;

/**
 * Milliseconds on the machine's monotonic clock (`CLOCK_MONOTONIC`, the same in every process
 * here): stamps taken in the client, the proxy and the upstream can be subtracted.
 */
export const monotonic = () => Number(process.hrtime.bigint()) / 1e6;

/** The upstream's answer header with its stamps: `<first body byte in>,<last body byte in>`. */
export const UPSTREAM_STAMPS_HEADER = 'x-bench-upstream';

/** What the client is asked to measure. */
export interface ClientRun {
  tokens: number;
  calls: number;
  streamCalls: number;
  /** Calls after the rest whose conversation is new to the proxy (its first message differs). */
  freshCalls: number;
  warmUp: number;
  upstream: string;
  proxy: string;
  relay: string;
}

/** One request's times (milliseconds from before its first byte was written). */
export interface Timing {
  /** To the answer's last byte. */
  total: number;
  /** To the answer's first body byte. */
  first: number;
  /** To the upstream's first and last body byte in (its stamps, on the shared clock). */
  upstreamFirst: number;
  upstreamLast: number;
  /** To the request's last byte handed to the client's socket (`finish`). */
  written: number;
  /** When the request's first byte was written ({@link monotonic}). */
  startedAt: number;
}

/** One body sent both ways. */
export interface Pair {
  stream: boolean;
  /** A conversation new to the proxy. */
  fresh: boolean;
  direct: Timing;
  through: Timing;
  /** Through the bare relay. */
  relayed: Timing;
}

/** The client's answer. */
export interface ClientResult {
  historyTokens: number;
  messages: number;
  bodyBytes: number;
  pairs: Pair[];
}

type Message =
  | { floor: true; body: string; repeat: number }
  | { logs: true }
  | { cpu: true }
  | { run: ClientRun }
  | { go: true }
  | { close: true };

const send = (message: unknown) => process.send?.(message);

async function upstream(): Promise<void> {
  const server = createServer((request, response) => {
    let size = 0;
    let streamed = false;
    let firstIn = 0;
    request.on('data', (chunk: Buffer) => {
      // The stream flag sits at the start of the bodies this bench sends.
      if (size === 0) {
        firstIn = monotonic();
        streamed = chunk.subarray(0, 64).includes('"stream":true');
      }
      size += chunk.length;
    });
    request.on('end', () => {
      const stamps = `${firstIn},${monotonic()}`;
      if (!streamed) {
        const body = JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: Math.ceil(size / 4), completion_tokens: 1 },
        });
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          [UPSTREAM_STAMPS_HEADER]: stamps,
        });
        response.end(body);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', [UPSTREAM_STAMPS_HEADER]: stamps });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n');
      setTimeout(() => response.end('data: [DONE]\n\n'), REST_DELAY_MS);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.on('message', (message: Message) => {
    if ('close' in message) server.close(() => process.exit(0));
  });
}

/**
 * A bare store-and-forward relay: reads the body whole into one Buffer (as the proxy does),
 * sends it as it is to the upstream over a kept connection, and pipes the answer back. What
 * any HTTP hop that needs the whole body costs (two more loopback transfers of it, two more
 * processes woken): the floor under what the proxy adds.
 */
async function relay(upstreamUrl: string): Promise<void> {
  const target = new URL('/v1/chat/completions', upstreamUrl);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const call = request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            authorization: String(incoming.headers.authorization),
          },
        },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      call.end(body);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.on('message', (message: Message) => {
    if ('close' in message) {
      agent.destroy();
      server.close(() => process.exit(0));
    }
  });
}

/**
 * `PROXY_BENCH_THREAD_CPU=1`: the proxy's `process.cpuUsage()` (which its log lines' `forwardCpuMs`
 * read) counts its main thread only (Linux: `/proc/thread-self/schedstat`, nanoseconds on a
 * core), not V8's GC helper threads; the CPU per request still counts the whole process.
 */
function countMainThreadOnly(): void {
  const fd = openSync('/proc/thread-self/schedstat', 'r');
  const buffer = Buffer.alloc(128);
  const mainThread = (): NodeJS.CpuUsage => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const nanoseconds = Number(buffer.toString('latin1', 0, length).split(' ')[0]);
    return { user: nanoseconds / 1000, system: 0 };
  };
  process.cpuUsage = ((previous?: NodeJS.CpuUsage) => {
    const now = mainThread();
    return previous === undefined ? now : { user: now.user - previous.user, system: 0 };
  }) as typeof process.cpuUsage;
}

async function proxy(upstreamUrl: string, module: string): Promise<void> {
  const processCpu = process.cpuUsage.bind(process);
  if (process.env.PROXY_BENCH_THREAD_CPU === '1') countMainThreadOnly();
  const { startProxy } = (await import(module)) as typeof import('../src/proxy/index.js');
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  await manager.ready();
  const logs: { entry: ProxyLogEntry; at: number; sentAt: number }[] = [];
  // The main thread's garbage-collection pauses (delivered after the fact: matched when asked).
  const pauses: { start: number; end: number }[] = [];
  new PerformanceObserver((list) => {
    for (const gc of list.getEntries()) pauses.push({ start: gc.startTime, end: gc.startTime + gc.duration });
  }).observe({ entryTypes: ['gc'] });
  const running = await startProxy({
    upstream: upstreamUrl,
    manager,
    port: 0,
    log: (entry) => logs.push({ entry, at: performance.now(), sentAt: monotonic() }),
  });
  const cpu = () => {
    const { user, system } = processCpu();
    return (user + system) / 1000;
  };
  send({ url: running.url });
  process.on('message', async (message: Message) => {
    if ('floor' in message) {
      const bytes = Buffer.from(message.body);
      const times: number[] = [];
      for (let i = 0; i < message.repeat; i++) {
        const started = performance.now();
        JSON.parse(bytes.toString('utf8'));
        times.push(performance.now() - started);
      }
      send({ floor: times });
    } else if ('cpu' in message) send({ cpu: cpu() });
    else if ('logs' in message) {
      send({ logs: logs.splice(0).map((log) => withPauses(log, pauses)) });
      pauses.length = 0;
    } else if ('close' in message) {
      await running.close();
      process.exit(0);
    }
  });
}

/**
 * A log line with the main thread's GC pauses that fell in its `forward` span. The line is
 * written once the answer's first byte went back: the span ends `returnMs` and `upstreamMs`
 * before that (give or take the microseconds between the steps).
 */
function withPauses(
  { entry, at, sentAt }: { entry: ProxyLogEntry; at: number; sentAt: number },
  pauses: readonly { start: number; end: number }[],
): ProxyLogEntry & BenchLogFields {
  const back = (entry.returnMs ?? 0) + (entry.upstreamMs ?? 0);
  const end = at - back;
  const start = end - (entry.forwardMs ?? 0);
  let gcMs = 0;
  for (const pause of pauses) gcMs += Math.max(0, Math.min(end, pause.end) - Math.max(start, pause.start));
  const upstreamAt = sentAt - back;
  const lastInAt = upstreamAt - (entry.forwardMs ?? 0);
  const handlerAt = lastInAt - (entry.readMs ?? 0);
  return { ...entry, gcMs, forwardStart: start, handlerAt, lastInAt, upstreamAt, sentAt };
}

/** What the bench adds to the proxy's log lines. */
export interface BenchLogFields {
  /** Milliseconds of main-thread GC pauses within `forwardMs`. */
  gcMs: number;
  /**
   * When the `forward` span began (`performance.now()` in the proxy's process, about the
   * milliseconds `--trace-gc` prints): matches a call to GC work the `gc` entries do not show
   * (incremental marking steps on the main thread, marking on helper threads).
   */
  forwardStart: number;
  /** On the shared clock ({@link monotonic}): the handler ran, the body's last byte was in, its first byte went upstream, the answer's first byte went back. */
  handlerAt: number;
  lastInAt: number;
  upstreamAt: number;
  sentAt: number;
}

/** A Chat Completions history of about `tokens` tokens (a synthetic coding session). */
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

/** Posts `body` over `agent`'s kept connection; resolves with its times. */
function post(agent: Agent, base: URL, body: Buffer): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = monotonic();
    let first = 0;
    let written = 0;
    const call = request(
      new URL('/v1/chat/completions', base),
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          authorization: 'Bearer bench',
        },
      },
      (response) => {
        const [upstreamFirst, upstreamLast] = String(response.headers[UPSTREAM_STAMPS_HEADER])
          .split(',')
          .map((stamp) => Number(stamp) - started);
        response.on('data', () => {
          if (first === 0) first = monotonic() - started;
        });
        response.on('end', () =>
          resolve({
            total: monotonic() - started,
            first,
            upstreamFirst: upstreamFirst!,
            upstreamLast: upstreamLast!,
            written,
            startedAt: started,
          }),
        );
        response.on('error', reject);
      },
    );
    call.on('error', reject);
    call.on('finish', () => {
      written = monotonic() - started;
    });
    call.end(body);
  });
}

async function client(): Promise<void> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  await manager.ready();
  send({ ready: true });
  process.on('message', async (message: Message) => {
    if ('close' in message) process.exit(0);
    if (!('run' in message)) return;
    const run = message.run;
    const messages = history(manager, run.tokens);
    const historyTokens = manager.estimate(messages, { format: 'openai-chat' }).total;
    const count = messages.length;
    // Every body before the first call: building one is the client's work, never inside a pair.
    const warm: Buffer[] = [];
    for (let i = 0; i < run.warmUp; i++) {
      messages.push({ role: 'user', content: `warm-up ${i}` });
      warm.push(bodyOf(messages, false));
    }
    const bodies: Buffer[] = [];
    for (let call = 0; call < run.calls + run.streamCalls; call++) {
      messages.push({ role: 'user', content: `follow-up ${call}: run the tests again` });
      bodies.push(bodyOf(messages, call >= run.calls));
    }
    // Fresh conversations: the same history under another first message (a session, and a
    // body, the proxy has not seen: parsed whole, counted by the manager from nothing).
    for (let call = 0; call < run.freshCalls; call++) {
      const first = messages[0]!;
      bodies.push(
        bodyOf(
          [{ ...first, content: `fresh ${call}: ${String(first.content)}` }, ...messages.slice(1)],
          false,
        ),
      );
    }
    const direct = new Agent({ keepAlive: true, maxSockets: 1 });
    const through = new Agent({ keepAlive: true, maxSockets: 1 });
    const relayed = new Agent({ keepAlive: true, maxSockets: 1 });
    const upstreamUrl = new URL(run.upstream);
    const proxyUrl = new URL(run.proxy);
    const relayUrl = new URL(run.relay);
    for (const body of warm) {
      await post(direct, upstreamUrl, body);
      await post(relayed, relayUrl, body);
      await post(through, proxyUrl, body);
    }
    // Warm: the bench reads the proxy's CPU time, then says go.
    await new Promise<void>((go) => {
      const on = (message: { go?: true }) => {
        if (!message.go) return;
        process.off('message', on);
        go();
      };
      process.on('message', on);
      send({ warmed: true });
    });
    const pairs: Pair[] = [];
    for (const [call, body] of bodies.entries()) {
      // The client's own garbage collected between pairs, not inside one.
      if (call % 10 === 0) (globalThis as { gc?: () => void }).gc?.();
      // The three legs in turn, their order rotated call by call (straight, relay, proxy; then
      // relay, proxy, straight; then proxy, straight, relay): each leg goes first, second and
      // last alike, and the proxy never takes two calls in a row (it is idle when one comes,
      // as between an agent's model calls).
      const legs = [
        () => post(direct, upstreamUrl, body),
        () => post(relayed, relayUrl, body),
        () => post(through, proxyUrl, body),
      ];
      const times: Timing[] = [];
      for (let k = 0; k < 3; k++) {
        const leg = (call + k) % 3;
        times[leg] = await legs[leg]!();
      }
      const [straight, relay, proxied] = times as [Timing, Timing, Timing];
      const fresh = call >= run.calls + run.streamCalls;
      pairs.push({
        stream: !fresh && call >= run.calls,
        fresh,
        direct: straight,
        through: proxied,
        relayed: relay,
      });
    }
    direct.destroy();
    through.destroy();
    relayed.destroy();
    const result: ClientResult = { historyTokens, messages: count, bodyBytes: bodies[0]!.length, pairs };
    send({ pairs: result, first: bodies[0]!.toString('utf8') });
  });
}

const [role, upstreamUrl, module] = process.argv.slice(2);
// The bench gone (stopped, crashed): no child outlives it, least of all at its raised priority.
// (Only in a child: the bench imports this file for its types and constants.)
if (role !== undefined && process.send !== undefined) process.on('disconnect', () => process.exit(0));
if (role === 'upstream') await upstream();
else if (role === 'relay') await relay(upstreamUrl!);
else if (role === 'proxy') await proxy(upstreamUrl!, module ?? '../src/proxy/index.js');
else if (role === 'client') await client();

/**
 * What the compacting proxy (`agent-compaction proxy`, src/proxy) adds to a request, printed by
 * `npm run bench` (`--no-proxy` skips it; `npx tsx bench/proxy.ts` runs it alone).
 *
 * A Chat Completions history of ~128k tokens (a synthetic coding session) is posted as it is
 * by a stateless client, growing by one user message per call, alternately straight to an
 * upstream on loopback and through the proxy in front of it (warm, below the trigger: the
 * common call). The upstream is a bare `node:http` server that reads the body and answers at
 * once, so the difference per pair is what the proxy adds: reading, parsing and compacting
 * the request, the second loopback hop (the body sent again), and piping the answer back.
 * The proxy's own work (parse, session, compact, the body to send; from its log lines) is
 * printed apart: the rest is moving the bytes, which grows with the machine's load (client,
 * proxy and upstream share this process's event loop). For streams, the
 * upstream sends its first event at once and the rest 50 ms later: the time to the first
 * byte through the proxy against straight, which must not include those 50 ms.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactManager } from '../src/index.js';
import { type ProxyLogEntry, startProxy } from '../src/proxy/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const CALLS = Number(process.env.PROXY_BENCH_CALLS ?? 200);
const STREAM_CALLS = Number(process.env.PROXY_BENCH_STREAM_CALLS ?? 60);
const REST_DELAY_MS = 50;
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/** The proxy's figures (milliseconds). */
export interface ProxyBenchFigures {
  historyTokens: number;
  messages: number;
  calls: number;
  directP50: number;
  overheadP50: number;
  overheadP99: number;
  compactP50: number;
  compactP99: number;
  prepareP50: number;
  prepareP99: number;
  firstByteDirectP50: number;
  firstByteOverheadP50: number;
  firstByteOverheadP99: number;
}

/** An upstream that answers at once (JSON), or streams a first event at once and the rest later. */
async function upstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    let size = 0;
    let streamed = false;
    request.on('data', (chunk: Buffer) => {
      // The stream flag sits near the start of the body this bench sends.
      if (size === 0) streamed = chunk.subarray(0, 64).includes('"stream":true');
      size += chunk.length;
    });
    request.on('end', () => {
      if (!streamed) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: Math.ceil(size / 4), completion_tokens: 1 },
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"ok"}}]}\n\n');
      setTimeout(() => response.end('data: [DONE]\n\n'), REST_DELAY_MS);
    });
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

function history(manager: CompactManager): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let seed = 11; manager.estimate(messages, { format: 'openai-chat' }).total < 128_000; seed++) {
    const part = syntheticSession({ turns: 4, seed, toolDensity: 3, resultChars: 3_300 });
    messages.push(...part.filter((m) => m.role !== 'system' || messages.length === 0));
  }
  return messages;
}

/** Posts `messages` to `base`; resolves with the wall time, and the time to the first body byte. */
async function post(
  base: string,
  messages: unknown[],
  stream: boolean,
): Promise<{ total: number; first: number }> {
  const body = `{"stream":${stream},"model":"gpt-4o","messages":${JSON.stringify(messages)}}`;
  const started = performance.now();
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body,
  });
  const reader = response.body!.getReader();
  let first = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    if (first === 0) first = performance.now() - started;
  return { total: performance.now() - started, first };
}

/** Runs the bench (about 20 s on a quiet machine). */
export async function proxyBench(): Promise<ProxyBenchFigures> {
  const server = await upstream();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  await manager.ready();
  const logs: ProxyLogEntry[] = [];
  const proxy = await startProxy({
    upstream: server.url,
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
  });
  const messages = history(manager);
  const historyTokens = manager.estimate(messages, { format: 'openai-chat' }).total;
  const count = messages.length;
  const overhead: number[] = [];
  const direct: number[] = [];
  const firstOverhead: number[] = [];
  const firstDirect: number[] = [];
  for (let i = 0; i < 10; i++) await post(proxy.url, messages, false); // warm-up (tokenizer, JIT)
  for (let call = 0; call < CALLS + STREAM_CALLS; call++) {
    messages.push({ role: 'user', content: `follow-up ${call}: run the tests again` });
    const stream = call >= CALLS;
    const straight = await post(server.url, messages, stream);
    const through = await post(proxy.url, messages, stream);
    if (stream) {
      firstDirect.push(straight.first);
      firstOverhead.push(through.first - straight.first);
    } else {
      direct.push(straight.total);
      overhead.push(through.total - straight.total);
    }
  }
  const compact = logs.slice(10).map((entry) => entry.compactMs ?? 0);
  const prepare = logs.slice(10).map((entry) => entry.prepareMs ?? 0);
  await proxy.close();
  await server.close();
  return {
    historyTokens,
    messages: count,
    calls: CALLS,
    directP50: percentile(direct, 0.5),
    overheadP50: percentile(overhead, 0.5),
    overheadP99: percentile(overhead, 0.99),
    compactP50: percentile(compact, 0.5),
    compactP99: percentile(compact, 0.99),
    prepareP50: percentile(prepare, 0.5),
    prepareP99: percentile(prepare, 0.99),
    firstByteDirectP50: percentile(firstDirect, 0.5),
    firstByteOverheadP50: percentile(firstOverhead, 0.5),
    firstByteOverheadP99: percentile(firstOverhead, 0.99),
  };
}

/** Prints the bench's rows. */
export function printProxyBench(f: ProxyBenchFigures): void {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  console.log(
    `  history ${f.historyTokens} tokens, ${f.messages} messages, ${f.calls} calls (+1 message each), warm, below the trigger`,
  );
  console.log(`  straight to the upstream          p50 ${ms(f.directP50)}`);
  console.log(`  added by the proxy                p50 ${ms(f.overheadP50)}   p99 ${ms(f.overheadP99)}`);
  console.log(
    `  the proxy's own work per request  p50 ${ms(f.prepareP50)}   p99 ${ms(f.prepareP99)} (parse, session, compact, body to send)`,
  );
  console.log(`    of which the manager's compact  p50 ${ms(f.compactP50)}   p99 ${ms(f.compactP99)}`);
  console.log(
    `  stream: first byte straight p50 ${ms(f.firstByteDirectP50)}; added by the proxy p50 ${ms(f.firstByteOverheadP50)}   p99 ${ms(f.firstByteOverheadP99)} (the rest follows ${REST_DELAY_MS} ms later)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) printProxyBench(await proxyBench());

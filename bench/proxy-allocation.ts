/**
 * What the proxy allocates on V8's heap per request at a ~130k-token history (the garbage its
 * collections then have to go through), by call site: `npx tsx bench/proxy-allocation.ts`.
 * Issue 49 point 5. Not in `npm run bench` (a diagnosis, not a row).
 *
 * Method. One process: a loopback upstream that answers at once, the proxy
 * (`startProxy`), and a client posting a stateless client's Chat Completions bodies (the bench's
 * synthetic coding session, one message more each call, built before the first call) over one
 * kept connection. After 10 warm calls, V8's sampling heap profiler (every 4 KiB, objects
 * collected by either collection kept) runs over 50 calls; the bytes sampled are divided by 50.
 * The client's own requests are in the figure too (a few KB; the bodies were built before).
 * The buffers holding each body (outside V8's heap) are not counted.
 *
 * `PROXY_ALLOC_FRONT=1` changes a field in front of the conversation every call (`temperature`,
 * as a client that sets it per call does); `PROXY_BENCH_MODULE=<path>` measures another build of
 * src/proxy (its path from bench/).
 */
import { Agent, createServer, request } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { CompactManager } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const WARM = 10;
const SAMPLED = 50;

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

const module = process.env.PROXY_BENCH_MODULE ?? '../src/proxy/index.js';
const { startProxy } = (await import(module)) as typeof import('../src/proxy/index.js');
const answer = JSON.stringify({
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1000, completion_tokens: 1 },
});
const upstream = createServer((incoming, response) => {
  incoming.resume();
  incoming.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    response.end(answer);
  });
});
await new Promise<void>((ready) => upstream.listen(0, '127.0.0.1', ready));
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
await manager.ready();
const proxy = await startProxy({
  upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
  manager,
  port: 0,
});

const messages: Record<string, unknown>[] = [];
for (let seed = 11; manager.estimate(messages, { format: 'openai-chat' }).total < 128_000; seed++)
  for (const { meta: _libraryOnly, ...message } of syntheticSession({
    turns: 2,
    seed,
    toolDensity: 3,
    resultChars: 3_300,
  }))
    if (message.role !== 'system' || messages.length === 0) messages.push(message);
const front = process.env.PROXY_ALLOC_FRONT === '1';
const bodies: Buffer[] = [];
for (let i = 0; i < WARM + SAMPLED; i++) {
  messages.push({ role: 'user', content: `follow-up ${i}` });
  const fields = `"stream":false,"model":"gpt-4o"${front ? `,"temperature":0.${i % 2}` : ''}`;
  bodies.push(Buffer.from(`{${fields},"messages":${JSON.stringify(messages)}}`));
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const post = (body: Buffer) =>
  new Promise<void>((resolve, reject) => {
    const call = request(
      new URL('/v1/chat/completions', proxy.url),
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        response.resume();
        response.on('end', resolve);
      },
    );
    call.on('error', reject);
    call.end(body);
  });

for (const body of bodies.slice(0, WARM)) await post(body);
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 4096,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (const body of bodies.slice(WARM)) await post(body);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };

const bySite = new Map<string, number>();
const walk = (node: ProfileNode, stack: string[]) => {
  const { functionName, url } = node.callFrame;
  const frames = [...stack, `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}`];
  if (node.selfSize > 0) {
    const site = frames.slice(-3).reverse().join(' < ');
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, frames);
};
walk(profile.head, []);
const kb = (bytes: number) => `${(bytes / SAMPLED / 1024).toFixed(1)} KB`;
const total = [...bySite.values()].reduce((sum, bytes) => sum + bytes, 0);
console.log(
  `  heap allocated per request at ${messages.length} messages (${front ? 'a field in front changed each call' : 'fields unchanged'}): ${kb(total)}`,
);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 8))
  console.log(`    ${kb(bytes).padStart(9)}  ${site}`);
await proxy.close();
upstream.close();

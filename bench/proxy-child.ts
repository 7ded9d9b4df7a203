/**
 * The processes of bench/proxy.ts, each on its own event loop as in a deployment: `upstream`
 * (a bare `node:http` provider that reads the body and answers at once, or streams a first
 * event at once and the rest later) and `proxy` (the compacting proxy in front of it). Each
 * says `{ url }` over IPC once it listens. The proxy's process also answers `{ floor }`
 * messages: the time of `JSON.parse` over a body it was sent, decoded from bytes as a request
 * arrives, measured where the proxy runs and under the same load; and `{ cpu }`: the CPU
 * milliseconds the process used so far, that timing left out.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactManager } from '../src/index.js';
import type { ProxyLogEntry } from '../src/proxy/index.js';

/** Milliseconds between a stream's first event and the rest. */
export const REST_DELAY_MS = 50;

type Message = { floor: string } | { floorOf: true; repeat: number } | { logs: true } | { close: true };

const send = (message: unknown) => process.send?.(message);

async function upstream(): Promise<void> {
  const server = createServer((request, response) => {
    let size = 0;
    let streamed = false;
    request.on('data', (chunk: Buffer) => {
      // The stream flag sits at the start of the bodies this bench sends.
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
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.on('message', (message: Message) => {
    if ('close' in message) server.close(() => process.exit(0));
  });
}

async function proxy(upstreamUrl: string, module: string): Promise<void> {
  const { startProxy } = (await import(module)) as typeof import('../src/proxy/index.js');
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
  await manager.ready();
  const logs: ProxyLogEntry[] = [];
  const running = await startProxy({
    upstream: upstreamUrl,
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
  });
  let floorBytes = Buffer.alloc(0);
  // CPU spent timing the floor, left out of the proxy's CPU time.
  let floorCpu = 0;
  const cpu = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  send({ url: running.url });
  process.on('message', async (message: Message) => {
    if ('floor' in message) {
      floorBytes = Buffer.from(message.floor);
      send({ ok: true });
    } else if ('floorOf' in message) {
      const times: number[] = [];
      const cpuBefore = cpu();
      for (let i = 0; i < message.repeat; i++) {
        const started = performance.now();
        JSON.parse(floorBytes.toString('utf8'));
        times.push(performance.now() - started);
      }
      floorCpu += cpu() - cpuBefore;
      send({ floor: times });
    } else if ('cpu' in message) {
      send({ cpu: cpu() - floorCpu });
    } else if ('logs' in message) send({ logs: logs.splice(0) });
    else if ('close' in message) {
      await running.close();
      process.exit(0);
    }
  });
}

const [role, upstreamUrl, module] = process.argv.slice(2);
if (role === 'upstream') await upstream();
else if (role === 'proxy') await proxy(upstreamUrl!, module ?? '../src/proxy/index.js');

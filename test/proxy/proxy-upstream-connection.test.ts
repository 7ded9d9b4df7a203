/**
 * The proxy's connection to its upstream: one kept connection serves request after request (no
 * TCP setup per request), and a kept connection the upstream dropped while idle costs the
 * client nothing (the request goes again, once, on a fresh one). Against a real `node:http`
 * upstream on loopback that counts its connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream answering Chat Completions; `onRequest` may take a request over (returns true). */
async function upstream(
  onRequest?: (request: IncomingMessage, response: ServerResponse, nth: number) => boolean,
) {
  const seen = { connections: 0, requests: 0 };
  const server = createServer((request, response) => {
    const nth = ++seen.requests;
    request.resume();
    request.on('end', () => {
      if (onRequest?.(request, response, nth)) return;
      const body = JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 1 },
      });
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    });
  });
  server.on('connection', () => seen.connections++);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function proxyTo(url: string): Promise<RunningProxy> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  const proxy = await startProxy({ upstream: url, manager, port: 0 });
  cleanups.push(() => proxy.close({ graceMs: 1000 }));
  return proxy;
}

const ask = (proxy: RunningProxy, turn: number) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: JSON.stringify({
      model: 'gpt-4o',
      messages: Array.from({ length: turn + 1 }, (_, i) => ({ role: 'user', content: `turn ${i}` })),
    }),
  });

describe("the proxy's connection to the upstream", () => {
  it('is opened once and kept for the requests that follow', async () => {
    const provider = await upstream();
    const proxy = await proxyTo(provider.url);
    for (let turn = 0; turn < 6; turn++) {
      const response = await ask(proxy, turn);
      expect(response.status).toBe(200);
      await response.text();
    }
    expect(provider.seen.requests).toBe(6);
    expect(provider.seen.connections).toBe(1);
  });

  it('dropped by the upstream while kept, costs the client nothing: the request goes again on a fresh one', async () => {
    // The second request meets the kept connection closed under it, without an answer.
    const provider = await upstream((request, _response, nth) => {
      if (nth !== 2) return false;
      request.socket.destroy();
      return true;
    });
    const proxy = await proxyTo(provider.url);
    for (let turn = 0; turn < 3; turn++) {
      const response = await ask(proxy, turn);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ choices: [{ message: { content: 'ok' } }] });
    }
    // Requests 1 and 2 on the first connection; 2 again, then 3, on the second.
    expect(provider.seen.requests).toBe(4);
    expect(provider.seen.connections).toBe(2);
  });
});

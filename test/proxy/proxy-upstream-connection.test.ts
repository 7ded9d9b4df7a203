/**
 * The proxy's connection to its upstream: one kept connection serves request after request (no
 * TCP setup per request); a kept connection reset under a request is sent again on a fresh one
 * only when the upstream cannot have acted on it (an idempotent method, or a POST whose last
 * byte never went out): a POST the upstream had read is not sent twice (a paid model call);
 * a kept connection is closed before the idle timeout the upstream announces. Against a real
 * `node:http` upstream on loopback that counts its connections and requests.
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
  const seen = { connections: 0, requests: 0, closed: 0, closedByProxy: 0 };
  let onClosed: (() => void) | undefined;
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
  server.on('connection', (socket) => {
    seen.connections++;
    // The proxy's end of the connection closed first (not the upstream's idle timeout).
    socket.once('end', () => seen.closedByProxy++);
    socket.once('close', () => {
      seen.closed++;
      onClosed?.();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  /** Resolves once `count` connections have closed. */
  const closed = (count: number) =>
    new Promise<void>((done) => {
      onClosed = () => {
        if (seen.closed >= count) done();
      };
      onClosed();
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server, closed };
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

  it('reset by the upstream after it read a POST: the POST is not sent again (502), the next one is served', async () => {
    // The second request is read whole, then its kept connection is closed without an answer:
    // the upstream may have started the paid call; a second copy would be a second call.
    const provider = await upstream((request, _response, nth) => {
      if (nth !== 2) return false;
      request.socket.destroy();
      return true;
    });
    const proxy = await proxyTo(provider.url);
    const statuses: number[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const response = await ask(proxy, turn);
      statuses.push(response.status);
      const body = (await response.json()) as { error?: { type: string } };
      if (turn === 1) expect(body.error?.type).toBe('upstream_connection_reset');
    }
    expect(statuses).toEqual([200, 502, 200]);
    // Request 2 reached the upstream once.
    expect(provider.seen.requests).toBe(3);
    expect(provider.seen.connections).toBe(2);
  });

  it('reset under an idempotent request (GET): the request goes again on a fresh one', async () => {
    const provider = await upstream((request, response, nth) => {
      if (nth === 2) {
        request.socket.destroy();
        return true;
      }
      if (request.method !== 'GET') return false;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"data":[]}');
      return true;
    });
    const proxy = await proxyTo(provider.url);
    for (let turn = 0; turn < 3; turn++) {
      const response = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: 'Bearer test' } });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ data: [] });
    }
    // Requests 1 and 2 on the first connection; 2 again, then 3, on the second.
    expect(provider.seen.requests).toBe(4);
    expect(provider.seen.connections).toBe(2);
  });

  it('reset before a POST had all gone out: the POST goes again (the upstream never had it whole)', async () => {
    // A 16 MB body does not fit the socket's buffers: the upstream resets the kept connection
    // at the body's first bytes, before the proxy has handed the last one to the socket.
    const provider = await upstream();
    provider.server.removeAllListeners('request');
    let nth = 0;
    provider.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      nth++;
      provider.seen.requests++;
      if (nth === 2) {
        request.once('data', () => request.socket.destroy());
        return;
      }
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }] }),
        );
      });
    });
    // Nor may the upstream's own idle close (Node's 5 s, announced as Keep-Alive: timeout=5,
    // which the proxy honours a second early) come first.
    provider.server.keepAliveTimeout = 600_000;
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000_000 });
    // The kept connection must still be there when the POST goes out, however slow the
    // machine: its idle close far away (under load the 16 MB body's read and count outlasted
    // the default 4 s, and the POST went on a fresh connection, rightly not sent again).
    const proxy = await startProxy({
      upstream: provider.url,
      manager,
      port: 0,
      forwardEarly: false,
      upstreamIdleMs: 600_000,
    });
    cleanups.push(() => proxy.close({ graceMs: 1000 }));
    // The bulk outside the conversation: read and forwarded at once; built before the first
    // call, so that its making is not in the gap.
    const big = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      metadata: { padding: 'x'.repeat(16 * 1024 * 1024) },
    });
    expect((await ask(proxy, 0)).status).toBe(200);
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
      body: big,
    });
    expect(response.status).toBe(200);
    await response.text();
    expect(provider.seen.requests).toBe(3);
    expect(provider.seen.connections).toBe(2);
  });

  it('is closed a second before the idle timeout the upstream announces (Keep-Alive: timeout=2)', async () => {
    const provider = await upstream((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'keep-alive': 'timeout=2' });
      response.end('{"data":[]}');
      return request.method === 'GET';
    });
    // The upstream itself would keep it 20 s, then close it (the old code's way out).
    provider.server.keepAliveTimeout = 20_000;
    const proxy = await proxyTo(provider.url);
    const response = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: 'Bearer test' } });
    expect(await response.json()).toEqual({ data: [] });
    await provider.closed(1);
    expect(provider.seen.connections).toBe(1);
    expect(provider.seen.closedByProxy).toBe(1);
  });

  it("whose answer's head Node cannot read (over 16 KB) is a 502 that says so, not 'could not be reached'", async () => {
    const provider = await upstream((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-big': 'a'.repeat(20_000) });
      response.end('{}');
      return request.method === 'POST';
    });
    const proxy = await proxyTo(provider.url);
    const response = await ask(proxy, 0);
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({
      error: { type: 'upstream_bad_response', message: expect.stringContaining('HPE_HEADER_OVERFLOW') },
    });
    expect(provider.seen.requests).toBe(1);
  });
});

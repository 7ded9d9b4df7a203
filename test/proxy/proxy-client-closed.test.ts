/**
 * A client that goes away before its answer: the proxy writes its log line (status 499,
 * `error: 'client_closed'`, as nginx does) instead of nothing, and aborts the upstream's call so
 * that no tokens are paid for an answer nobody reads; a client that goes away mid-stream closes
 * the upstream's stream. Real HTTP on loopback: a bare `node:http` upstream that holds its
 * answer and tells when its request's connection closed, and `node:http` clients that close
 * their sockets. Each test waits for events (the upstream got the request, its connection
 * closed, the log line came).
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProxyLogEntry, type RunningProxy, startProxy } from '../../src/proxy/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Resolvable once. */
function signal<T = void>() {
  let fire!: (value: T) => void;
  const fired = new Promise<T>((resolve) => {
    fire = resolve;
  });
  return { fire, fired };
}

/**
 * An upstream that answers with `answer` (or holds the request, without one), and tells when a
 * request came in and when its connection closed.
 */
async function heldUpstream(answer?: (response: ServerResponse) => void) {
  const got = signal<IncomingMessage>();
  const closed = signal();
  const server = createServer((incoming, response) => {
    got.fire(incoming);
    incoming.resume();
    response.once('close', () => closed.fire());
    if (answer !== undefined) incoming.once('end', () => answer(response));
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, closed };
}

async function proxyTo(url: string) {
  const logs: ProxyLogEntry[] = [];
  const logged = signal<ProxyLogEntry>();
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  const proxy = await startProxy({
    upstream: url,
    manager,
    port: 0,
    log: (entry) => {
      logs.push(entry);
      logged.fire(entry);
    },
  });
  cleanups.push(() => proxy.close({ graceMs: 1000 }));
  return { proxy, logs, logged };
}

const chat = (stream = false) =>
  JSON.stringify({ model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'hello there' }] });

/** A request to the proxy whose socket the test closes; its answer's head when one comes. */
function open(proxy: RunningProxy, path: string, method: string, body?: string, declared?: number) {
  const head = signal<IncomingMessage>();
  const req = request(`${proxy.url}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer test',
      ...(body === undefined ? {} : { 'content-length': String(declared ?? Buffer.byteLength(body)) }),
    },
  });
  req.on('error', () => {});
  req.on('response', (response) => head.fire(response));
  if (body !== undefined) req.write(body);
  if (declared === undefined) req.end();
  return { req, head: head.fired };
}

// The old code wrote no line at all: its tests waited for one until this bound.
describe('a client that goes away before its answer', { timeout: 30_000 }, () => {
  it('while the upstream works on a compacted request: logged 499, the upstream call aborted', async () => {
    const upstream = await heldUpstream();
    const { proxy, logs, logged } = await proxyTo(upstream.url);
    const { req } = open(proxy, '/v1/chat/completions', 'POST', chat());
    await upstream.got.fired;
    req.destroy();
    await upstream.closed.fired;
    const entry = await logged.fired;
    expect(entry).toMatchObject({ method: 'POST', path: '/v1/chat/completions', status: 499 });
    expect(entry.error).toBe('client_closed');
    expect(logs).toHaveLength(1);
  });

  it('while its body is still coming: logged 499, the early-forwarded call closed', async () => {
    const upstream = await heldUpstream();
    const { proxy, logged } = await proxyTo(upstream.url);
    // A large body is forwarded while it arrives: the upstream sees the call open.
    const body = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x'.repeat(300_000) }],
    });
    const { req } = open(proxy, '/v1/chat/completions', 'POST', body.slice(0, 250_000), body.length);
    await upstream.got.fired;
    req.destroy();
    await upstream.closed.fired;
    expect(await logged.fired).toMatchObject({ status: 499, error: 'client_closed' });
  });

  it('on a forwarded path: logged 499, the upstream call aborted', async () => {
    const upstream = await heldUpstream();
    const { proxy, logged } = await proxyTo(upstream.url);
    const { req } = open(proxy, '/v1/models', 'GET');
    await upstream.got.fired;
    req.destroy();
    await upstream.closed.fired;
    expect(await logged.fired).toMatchObject({ method: 'GET', path: '/v1/models', status: 499 });
  });

  it('mid-stream: the upstream stream is closed (no more tokens generated for it)', async () => {
    const upstream = await heldUpstream((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
    });
    const { proxy, logs, logged } = await proxyTo(upstream.url);
    const { req, head } = open(proxy, '/v1/chat/completions', 'POST', chat(true));
    const response = await head;
    await new Promise((first) => response.once('data', first));
    // The answer has not ended: no line yet (the old code wrote it with the stream's head).
    expect(logs).toHaveLength(0);
    req.destroy();
    await upstream.closed.fired;
    // The stream's status, and that it was cut.
    expect(await logged.fired).toMatchObject({ status: 200, error: 'client_closed' });
  });
});

describe("a streamed answer's log line", { timeout: 30_000 }, () => {
  it('is written once the stream ended, with its usage and its whole duration', async () => {
    let rest!: () => void;
    const upstream = await heldUpstream((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n');
      rest = () => {
        response.write('data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7}}\n\n');
        response.end('data: [DONE]\n\n');
      };
    });
    const { proxy, logs, logged } = await proxyTo(upstream.url);
    const { head } = open(proxy, '/v1/chat/completions', 'POST', chat(true));
    const response = await head;
    await new Promise((first) => response.once('data', first));
    expect(logs).toHaveLength(0);
    const ended = new Promise((done) => response.once('end', done));
    response.resume();
    rest();
    const entry = await logged.fired;
    await ended;
    expect(entry).toMatchObject({ status: 200, usage: { inputTokens: 12, outputTokens: 7 } });
    expect(entry.error).toBeUndefined();
    expect(entry.totalMs).toBeGreaterThanOrEqual(entry.upstreamMs!);
  });
});

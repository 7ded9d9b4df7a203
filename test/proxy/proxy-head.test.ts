/**
 * HEAD requests forwarded by the proxy (`/v1/...` paths other than its own): the upstream's
 * status and headers come back, the answer is written once (Hono answers HEAD by wrapping the
 * handler's response, which on Node had already been written), and both connections stay
 * open for the next request.
 */
import { once } from 'node:events';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream answering every request 200 with a length, and counting its connections. */
async function upstreamServer() {
  const server = createServer((incoming, response) => {
    incoming.resume();
    response.writeHead(200, {
      'content-type': 'application/json',
      'content-length': '42',
      'x-upstream': 'yes',
    });
    response.end(incoming.method === 'HEAD' ? undefined : '{"object":"list","data":[],"padding":"...."}');
  });
  let connections = 0;
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
  };
}

/** One request on `agent`; resolves with its answer's head and whether its socket was a kept one. */
function send(proxy: RunningProxy, agent: Agent, method: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; reused: boolean }>(
    (resolve, reject) => {
      const req = request(`${proxy.url}/v1/models`, { method, agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, reused: req.reusedSocket }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('HEAD through the proxy', () => {
  it('passes the upstream head on, once, and keeps both connections', async () => {
    const upstream = await upstreamServer();
    const proxy = await startProxy({
      upstream: upstream.url,
      manager: new CompactManager({ model: 'gpt-4o' }),
      port: 0,
      log: () => {},
    });
    cleanups.push(() => proxy.close({ graceMs: 1000 }));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const failures = vi.spyOn(console, 'error');
    const first = await send(proxy, agent, 'HEAD');
    expect(first.status).toBe(200);
    expect(first.headers['x-upstream']).toBe('yes');
    expect(first.headers['content-length']).toBe('42');
    const second = await send(proxy, agent, 'HEAD');
    const third = await send(proxy, agent, 'GET');
    expect(third.status).toBe(200);
    // The client's connection was kept (not destroyed after a failed second write of the head).
    expect([second.reused, third.reused]).toEqual([true, true]);
    // The upstream's connection was freed after each HEAD and reused.
    expect(upstream.connections()).toBe(1);
    expect(failures).not.toHaveBeenCalled();
  });
});

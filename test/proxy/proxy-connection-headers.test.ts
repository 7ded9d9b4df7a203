/**
 * Headers a message names in its `Connection` header are hop-by-hop (RFC 9110 7.6.1): a proxy
 * removes them before forwarding, in both directions. The proxy dropped the standard hop-by-hop
 * names only, so a client's `Connection: x-hop` passed `x-hop` on to the upstream, and an
 * upstream's passed its own back to the client (left by review-80c).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { startProxy } from '../../src/proxy/index.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('headers named in Connection', () => {
  it('are not forwarded to the upstream nor passed back to the client', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const upstream = createServer((incoming, response) => {
      seen.push(incoming.headers);
      incoming.resume();
      response.writeHead(200, {
        'content-type': 'application/json',
        connection: 'keep-alive, X-Upstream-Hop',
        'x-upstream-hop': 'internal',
        'x-upstream-kept': 'yes',
      });
      response.end('{"object":"list","data":[]}');
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    cleanups.push(() => {
      upstream.closeAllConnections();
      upstream.close();
    });
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const proxy = await startProxy({
      upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      manager,
      port: 0,
      log: () => {},
    });
    cleanups.push(async () => {
      await proxy.close();
      await manager.shutdown();
    });
    const answer = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = request(
        `${proxy.url}/v1/models`,
        {
          headers: {
            connection: 'keep-alive, X-Client-Hop',
            'x-client-hop': 'secret',
            'x-client-kept': 'yes',
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!['x-client-kept']).toBe('yes');
    expect(seen[0]!['x-client-hop']).toBeUndefined();
    expect(answer['x-upstream-kept']).toBe('yes');
    expect(answer['x-upstream-hop']).toBeUndefined();
  });
});

/**
 * A body over the proxy's preallocated size (8 MB) is gathered in chunks and joined a megabyte
 * per turn of the loop (issue 47 point 2: an 11 MB body of 300k tiny messages was joined in one
 * ~10 ms stretch). The provider receives the client's bytes as sent, with and without the early
 * forward (without it, the body the proxy sends is the joined one); a body sent without a
 * declared length (chunked) the same. Passes on the code before the join in turns (an
 * equivalence guard).
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';

let running: { provider: ProviderTestServer; proxy: RunningProxy } | undefined;
afterEach(async () => {
  await running?.proxy.close({ graceMs: 1000 });
  await running?.provider.close();
  running = undefined;
});

/** POSTs `body` in 64 KB writes, with its length declared or chunked; resolves with the status. */
function post(url: string, body: Buffer, declared: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      authorization: 'Bearer k',
    };
    if (declared) headers['content-length'] = body.length;
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 65_536) req.write(body.subarray(at, at + 65_536));
    req.end();
  });
}

describe('a body over 8 MB through the proxy', () => {
  for (const [declared, forwardEarly] of [
    [true, false],
    [false, false],
    [true, true],
  ] as const) {
    it(`reaches the provider byte for byte (${declared ? 'declared length' : 'chunked'}, early forward ${forwardEarly})`, async () => {
      const provider = await startProviderTestServer();
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 50_000_000 });
      const proxy = await startProxy({
        upstream: provider.url,
        manager,
        port: 0,
        forwardEarly,
        log: () => {},
      });
      running = { provider, proxy };
      const messages = Array.from({ length: 4 }, (_, i) => ({
        role: i % 2 === 0 ? 'user' : 'assistant',
        content: `part ${i} é 日本 😀 ${'log line with numbers 12345 and words; '.repeat(60_000)}`,
      }));
      const body = Buffer.from(JSON.stringify({ model: 'gpt-4o', messages }));
      expect(body.length).toBeGreaterThan(8 * 1024 * 1024);
      expect(await post(proxy.url, body, declared)).toBe(200);
      expect(provider.requests).toHaveLength(1);
      expect(provider.requests[0]!.rawBody).toBe(body.toString('utf8'));
      await manager.shutdown();
    }, 60_000);
  }
});

/**
 * The proxy's own answers (a body that is not JSON, a body over the limit, an unreachable
 * upstream, a path it does not serve) come in the error shape of the provider the client
 * speaks: OpenAI's `{error: {message, type, param, code}}` on the Chat Completions and
 * Responses paths (and on forwarded paths without `anthropic-version`), Anthropic's
 * `{type: 'error', error: {type, message}}` on `/v1/messages` (and with `anthropic-version`).
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
let proxy: RunningProxy | undefined;
afterEach(async () => {
  await running?.close();
  await proxy?.close({ graceMs: 0 });
  running = undefined;
  proxy = undefined;
});

const openai = (type: string) => ({ error: { message: expect.any(String), type, param: null, code: null } });
const anthropic = (type: string) => ({ type: 'error', error: { type, message: expect.any(String) } });

async function answer(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: await response.json() };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

describe("the proxy's own errors in each provider's shape", () => {
  it('a body that is not JSON, and one over the limit', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 1000 });
    const base = running.proxy.url;
    for (const path of ['/v1/chat/completions', '/v1/responses'])
      expect(await answer(`${base}${path}`, 'not json')).toEqual({
        status: 400,
        body: openai('invalid_request_error'),
      });
    expect(await answer(`${base}/v1/messages`, 'not json')).toEqual({
      status: 400,
      body: anthropic('invalid_request_error'),
    });
    const large = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x'.repeat(2000) }],
    });
    expect(await answer(`${base}/v1/chat/completions`, large)).toEqual({
      status: 413,
      body: openai('request_too_large'),
    });
    expect(await answer(`${base}/v1/messages`, large)).toEqual({
      status: 413,
      body: anthropic('request_too_large'),
    });
    expect(await answer(`${base}/v1/embeddings`, large)).toEqual({
      status: 413,
      body: openai('request_too_large'),
    });
    expect(
      await answer(`${base}/v1/messages/count_tokens`, large, { 'anthropic-version': '2023-06-01' }),
    ).toEqual({ status: 413, body: anthropic('request_too_large') });
    expect(running.provider.requests).toHaveLength(0);
  });

  it('an upstream that cannot be reached', async () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    proxy = await startProxy({ upstream: `http://127.0.0.1:${await closedPort()}`, manager, port: 0 });
    const chat = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(await answer(`${proxy.url}/v1/chat/completions`, chat)).toEqual({
      status: 502,
      body: openai('upstream_unreachable'),
    });
    expect(await answer(`${proxy.url}/v1/messages`, chat)).toEqual({
      status: 502,
      body: anthropic('upstream_unreachable'),
    });
  });
});

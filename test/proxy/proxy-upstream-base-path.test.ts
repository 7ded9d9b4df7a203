/**
 * Upstreams with a base path, as the providers' SDKs take them. OpenAI-compatible endpoints
 * name their version in the base URL, not always as `/v1` (Gemini's
 * `https://generativelanguage.googleapis.com/v1beta/openai`, a gateway's `.../openai`): the
 * client's `/v1/chat/completions` goes to `<base>/chat/completions`. Before, only a base path
 * ending in `/v1` dropped the client's `/v1`, and Gemini was asked for
 * `/v1beta/openai/v1/chat/completions`, a 404. Anthropic's base URLs carry no version (a
 * gateway's `.../anthropic` takes `/v1/messages`), and an origin alone takes the whole path.
 * Real SDK clients, the proxy, and a loopback upstream that records the paths it is asked for.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { upstreamUrl } from '../../src/proxy/upstream/forward-request.js';

const CHAT = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
};
const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 1 },
};

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

/** A loopback upstream that answers every request and records its path. */
async function recordingUpstream(): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '';
      const body = path.endsWith('/messages') ? MESSAGE : path.endsWith('/models') ? { data: [] } : CHAT;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

async function proxyTo(upstream: string): Promise<RunningProxy> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  const proxy = await startProxy({ upstream, manager, port: 0, log: () => {} });
  open.push({ close: () => proxy.close({ graceMs: 1000 }) });
  return proxy;
}

describe('the upstream URL of a request (base paths)', () => {
  it.each([
    ['http://u.test', '/v1/chat/completions', false, 'http://u.test/v1/chat/completions'],
    ['http://u.test/v1', '/v1/chat/completions', false, 'http://u.test/v1/chat/completions'],
    [
      'http://u.test/v1beta/openai',
      '/v1/chat/completions',
      false,
      'http://u.test/v1beta/openai/chat/completions',
    ],
    ['http://u.test/v1beta/openai/', '/v1/models', false, 'http://u.test/v1beta/openai/models'],
    ['http://u.test', '/v1/messages', true, 'http://u.test/v1/messages'],
    ['http://u.test/gw/anthropic', '/v1/messages', true, 'http://u.test/gw/anthropic/v1/messages'],
    ['http://u.test/api/v1', '/v1/messages', true, 'http://u.test/api/v1/messages'],
  ])('%s + %s (anthropic %s) -> %s', (base, path, anthropic, expected) => {
    expect(upstreamUrl(new URL(base), path, '', anthropic)?.href).toBe(expected);
  });

  it("an OpenAI SDK client reaches Gemini's OpenAI-compatible base path", async () => {
    const upstream = await recordingUpstream();
    const proxy = await proxyTo(`${upstream.url}/v1beta/openai`);
    const client = new OpenAI({ apiKey: 'test-key', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hello there.' }],
    });
    expect(completion.choices[0]?.message.content).toBe('ok');
    await client.models.list();
    expect(upstream.paths).toEqual(['/v1beta/openai/chat/completions', '/v1beta/openai/models']);
  });

  it("an Anthropic SDK client reaches a gateway's Anthropic base path", async () => {
    const upstream = await recordingUpstream();
    const proxy = await proxyTo(`${upstream.url}/gw/anthropic`);
    const client = new Anthropic({ apiKey: 'test-key', baseURL: proxy.url, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello there.' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    expect(upstream.paths).toEqual(['/gw/anthropic/v1/messages']);
  });

  it('a Chat Completions or Responses request that carries anthropic-version keeps its own format', async () => {
    // A client that sends Anthropic's header on every request (a shared HTTP client) to an
    // OpenAI-compatible base path: the route says the format, not the header.
    const upstream = await recordingUpstream();
    const proxy = await proxyTo(`${upstream.url}/gw/openai`);
    const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' };
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }],
      ['/v1/responses', { model: 'gpt-4o', input: [{ role: 'user', content: 'hi' }] }],
    ] as const) {
      const response = await fetch(`${proxy.url}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    expect(upstream.paths).toEqual(['/gw/openai/chat/completions', '/gw/openai/responses']);
  });
});

/**
 * The proxy's safety rules, each against real servers on loopback: no request can make it
 * call another host; the client's credentials reach the provider and nothing else (no archive,
 * event or log line); the size limit, the health endpoint, upstream errors passed through,
 * a stream's first byte not held back, and a shutdown that finishes the answers in flight.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { startProxy } from '../../src/proxy/index.js';
import { fsStorage } from '../../src/storage/fs/index.js';
import { startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { reusedIdLoop, toolOutput } from '../support/tool-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const run = promisify(execFile);
let running: ProxiedProvider | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await running?.close();
  running = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A raw HTTP/1.1 exchange over a socket (request targets no client library would send). */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8');
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const chatBody = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

describe('the upstream is fixed by configuration', () => {
  it('no Host header, absolute target, //host, .. or encoded path reaches another host', async () => {
    const decoy = await startProviderTestServer();
    cleanups.push(() => decoy.close());
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider } = running;
    const decoyHost = new URL(decoy.url).host;
    const port = proxy.port;
    const attempts = [
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${decoyHost}\r\nX-Forwarded-Host: ${decoyHost}\r\nForwarded: host=${decoyHost}\r\nContent-Type: application/json\r\nContent-Length: ${chatBody.length}\r\nConnection: close\r\n\r\n${chatBody}`,
      `POST ${decoy.url}/v1/chat/completions HTTP/1.1\r\nHost: ${decoyHost}\r\nContent-Type: application/json\r\nContent-Length: ${chatBody.length}\r\nConnection: close\r\n\r\n${chatBody}`,
      `GET //${decoyHost}/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      `GET /v1/..//${decoyHost}/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      `GET /v1/%2e%2e/%2f%2f${decoyHost}/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      `GET /v1/@${decoyHost}/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      `GET http://${decoyHost}/v1/models HTTP/1.1\r\nHost: ${decoyHost}\r\nConnection: close\r\n\r\n`,
      `CONNECT ${decoyHost} HTTP/1.1\r\nHost: ${decoyHost}\r\n\r\n`,
    ];
    const answers: string[] = [];
    for (const attempt of attempts)
      answers.push(await rawExchange(port, attempt).catch((e: Error) => e.message));
    expect(decoy.requests).toEqual([]);
    // The first two were real requests: they went to the configured provider.
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(provider.requests.length).toBeGreaterThanOrEqual(1);
    expect(provider.requests.every((request) => request.headers.host === new URL(provider.url).host)).toBe(
      true,
    );
  });

  it('an upstream given with credentials, a query or another scheme is refused', async () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    for (const upstream of [
      'http://user:pw@127.0.0.1:1',
      'http://127.0.0.1:1/?x=1',
      'file:///etc/passwd',
      'nope',
    ])
      await expect(startProxy({ upstream, manager, port: 0 })).rejects.toMatchObject({
        code: 'invalid_config',
      });
  });

  it('an upstream idle time that is not a positive whole number of milliseconds is refused, naming it', async () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    for (const upstreamIdleMs of [0, -1, 1.5, Number.NaN])
      await expect(
        startProxy({ upstream: 'http://127.0.0.1:1', manager, port: 0, upstreamIdleMs }),
      ).rejects.toMatchObject({ code: 'invalid_config', issues: [{ path: ['upstreamIdleMs'] }] });
  });
});

/** Every file under `dir`, read as text. */
async function readTree(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    entries.filter((e) => e.isFile()).map((e) => readFile(join(e.parentPath, e.name), 'utf8')),
  );
  return texts.join('\n');
}

describe('credentials', () => {
  it('reach the provider, and appear in no archive, event or log line', async () => {
    const archive = await mkdtemp(join(tmpdir(), 'proxy-archive-'));
    cleanups.push(() => rm(archive, { recursive: true, force: true }));
    const anthropicKey = 'sk-ant-api03-PROXYSECRETanthropic0123456789abcdefghijklmnop';
    const openaiKey = 'sk-proj-PROXYSECRETopenai0123456789abcdefghijklmnopqrstu';
    running = await startProxiedProvider(reusedIdLoop({ tool: 'probe', steps: 14, idFor: (s) => `c${s}` }), {
      manager: { storage: fsStorage({ path: archive }) },
    });
    const { proxy, provider, manager, events, logs } = running;
    const anthropic = new Anthropic({ apiKey: anthropicKey, baseURL: proxy.url, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Probe the hosts.' }];
    for (let step = 0; step < 15; step++) {
      const message = await anthropic.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages,
      });
      const call = message.content.find((block) => block.type === 'tool_use');
      if (!call) break;
      messages.push({ role: 'assistant', content: message.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: toolOutput(step) }],
      });
    }
    const openai = new OpenAI({ apiKey: openaiKey, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    await manager.flush();
    // The loop compacted, so the archive holds originals and events.
    expect(logs.some((entry) => entry.applied)).toBe(true);
    const archived = await readTree(archive);
    expect(archived.length).toBeGreaterThan(1000);
    const seen = [archived, JSON.stringify(events), JSON.stringify(logs)].join('\n');
    for (const secret of ['PROXYSECRET', anthropicKey, openaiKey]) expect(seen).not.toContain(secret);
    // (this SDK version sends its key as a bearer token, Claude Code and curl as x-api-key)
    expect(provider.requests.some((r) => JSON.stringify(r.headers).includes(anthropicKey))).toBe(true);
    expect(provider.requests.some((r) => r.headers.authorization === `Bearer ${openaiKey}`)).toBe(true);
  });
});

describe('limits, health and errors', () => {
  it('a body over the limit is a 413 that says so; /healthz answers', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 64 * 1024 });
    const big = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'x'.repeat(100_000) }],
    });
    const response = await fetch(`${running.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { type: 'request_too_large' } });
    // Sent in chunks without a length: the proxy stops reading at the limit and says so.
    const chunks = [Buffer.from(big.slice(0, 50_000)), Buffer.from(big.slice(50_000))];
    const chunked = await fetch(`${running.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await chunked.json()).toMatchObject({ error: { type: 'request_too_large' } });
    expect(running.provider.requests).toEqual([]);
    const health = await fetch(`${running.proxy.url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    const bad = await fetch(`${running.proxy.url}/v1/messages`, { method: 'POST', body: '{not json' });
    expect(bad.status).toBe(400);
    const badSession = await fetch(`${running.proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-compaction-session': 'x'.repeat(300) },
      body: chatBody,
    });
    expect(badSession.status).toBe(400);
  });

  it('upstream errors come back with their status and body (SDK errors intact)', async () => {
    running = await startProxiedProvider(() => ({ error: { status: 429, message: 'slow down please' } }));
    const anthropic = new Anthropic({ apiKey: 'k', baseURL: running.proxy.url, maxRetries: 0 });
    const error = await anthropic.messages
      .create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as Error).message).toContain('slow down please');
    const raw = await fetch(`${running.proxy.url}/v1/chat/completions`, { method: 'POST', body: chatBody });
    expect(raw.status).toBe(429);
    expect(await raw.json()).toMatchObject({ error: { message: 'slow down please' } });
  });

  it("an unreachable upstream is a 502 in the providers' error shape", async () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    const closed = createServer();
    await new Promise<void>((ready) => closed.listen(0, '127.0.0.1', ready));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    const proxy = await startProxy({ upstream: `http://127.0.0.1:${port}`, manager, port: 0 });
    cleanups.push(() => proxy.close());
    const response = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: chatBody });
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ error: { type: 'upstream_unreachable' } });
  });
});

/** An upstream that sends one SSE event, then waits for `release` before finishing. */
async function gatedUpstream(): Promise<{
  url: string;
  release: () => void;
  arrived: Promise<void>;
  server: Server;
  paths: string[];
}> {
  const paths: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((open) => {
    release = open;
  });
  let arrived!: () => void;
  const arrivedPromise = new Promise<void>((done) => {
    arrived = done;
  });
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    request.resume();
    request.on('end', async () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"choices":[{"index":0,"delta":{"content":"first"}}]}\n\n');
      arrived();
      await gate;
      response.write('data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1}}\n\n');
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    release,
    arrived: arrivedPromise,
    server,
    paths,
  };
}

describe('streams', () => {
  it("a stream's first event reaches the client before the upstream finished; shutdown lets it finish", async () => {
    const upstream = await gatedUpstream();
    cleanups.push(() => new Promise<void>((done) => upstream.server.close(() => done())));
    const manager = new CompactManager({ model: 'gpt-4o' });
    const proxy = await startProxy({ upstream: upstream.url, manager, port: 0 });
    const body = JSON.stringify({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'go' }],
    });
    const response = await fetch(`${proxy.url}/v1/chat/completions?beta=true`, { method: 'POST', body });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // Read while the upstream still holds the rest back: nothing was buffered.
    expect(first).toContain('"first"');
    // A shutdown now waits for this stream...
    const closed = proxy.close({ graceMs: 60_000 });
    expect(proxy.inFlight).toBe(1);
    upstream.release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    await closed;
    // ...which ended whole, its usage fed to the manager.
    expect(rest).toContain('[DONE]');
    // The query string went along (Claude Code calls /v1/messages?beta=true).
    expect(upstream.paths).toEqual(['/v1/chat/completions?beta=true']);
    const session = response.headers.get('x-compaction-session')!;
    expect(manager.lastReportedUsage(session)?.inputTokens).toBe(7);
    // And the proxy no longer listens.
    await expect(fetch(`${proxy.url}/healthz`)).rejects.toThrow();
  });
});

describe("the client's own bytes", () => {
  it('below the trigger the upstream receives exactly what the client sent, call after call', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const messages: unknown[] = [{ role: 'system', content: 'Be brief.' }];
    for (let call = 0; call < 4; call++) {
      messages.push({ role: 'user', content: `question ${call}` });
      // Spaced JSON, as some clients write it: a body written again would lose the spaces.
      const body = JSON.stringify({ model: 'gpt-4o', messages }, null, 2);
      const response = await fetch(`${running.proxy.url}/v1/chat/completions`, { method: 'POST', body });
      expect(response.status).toBe(200);
      expect(running.provider.requests.at(-1)?.rawBody).toBe(body);
      messages.push({ role: 'assistant', content: 'ok' });
    }
  });
});

describe('a compressed request body', () => {
  it('is decoded: left as it is, forwarded compressed as sent; rewritten, sent uncompressed', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    // 400 bytes (under the window), then ~150 KB of gzip (random hex, far over the window: cut).
    for (const padding of ['x'.repeat(400), randomBytes(150_000).toString('hex')]) {
      const body = gzipSync(
        JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `hi ${padding}` }] }),
      );
      const response = await fetch(`${running.proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      });
      expect(response.status).toBe(200);
      const received = running.provider.requests.at(-1)!;
      expect(running.logs.at(-1)?.error).toBeUndefined();
      if (padding.length === 400) {
        expect(received.headers['content-encoding']).toBe('gzip');
        expect(received.rawBody).toBe(body.toString('utf8'));
      } else {
        expect(received.headers['content-encoding']).toBeUndefined();
        expect(received.body).toMatchObject({ model: 'gpt-4o', messages: [{ role: 'user' }] });
      }
    }
  });
});

describe('curl', () => {
  it('streamed and whole answers through the proxy, session header honoured', async () => {
    running = await startProxiedProvider(() => ({ text: 'hello from upstream' }));
    const url = `${running.proxy.url}/v1/chat/completions`;
    const whole = await run('curl', [
      '-sS',
      '-i',
      url,
      '-H',
      'content-type: application/json',
      '-H',
      'authorization: Bearer sk-curl',
      '-H',
      'x-compaction-session: curl-1',
      '-d',
      chatBody,
    ]);
    expect(whole.stdout).toMatch(/^HTTP\/1\.1 200/);
    expect(whole.stdout).toMatch(/x-compaction-session: curl-1/i);
    expect(whole.stdout).toContain('hello from upstream');
    const streamBody = JSON.stringify({
      ...JSON.parse(chatBody),
      stream: true,
      stream_options: { include_usage: true },
    });
    const streamed = await run('curl', [
      '-sS',
      '-N',
      url,
      '-H',
      'content-type: application/json',
      '-H',
      'x-compaction-session: curl-1',
      '-d',
      streamBody,
    ]);
    expect(streamed.stdout).toMatch(/^data: \{/m);
    expect(streamed.stdout).toContain('data: [DONE]');
    const anthropic = await run('curl', [
      '-sS',
      `${running.proxy.url}/v1/messages?beta=true`,
      '-H',
      'x-api-key: sk-curl',
      '-H',
      'anthropic-version: 2023-06-01',
      '-d',
      JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    ]);
    expect(anthropic.stdout).toContain('event: message_stop');
    expect(running.logs.filter((entry) => entry.session === 'curl-1')).toHaveLength(2);
    expect(running.provider.requests.at(-1)?.headers['x-api-key']).toBe('sk-curl');
    expect(running.manager.lastReportedUsage('curl-1')?.inputTokens).toBeGreaterThan(0);
  });
});

/**
 * A large body is forwarded while it arrives (src/proxy/upstream/early-forward.ts): the upstream has its
 * first bytes before the client sent its last; the client's bytes reach it unchanged when
 * nothing is compacted; a compacted body is sent anew and the call opened early is left
 * incomplete (never a request the upstream answers); a conversation compacted once is not
 * forwarded early again; a client that goes away mid-body leaves no request behind. Against a
 * real `node:http` upstream on loopback that records every request it sees, whole or not.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProxyLogEntry, type RunningProxy, startProxy } from '../../src/proxy/index.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One request as the upstream saw it. */
interface Seen {
  bytes: Buffer[];
  received: number;
  /** Its body's end came (a request the upstream answers). */
  complete: boolean;
  /** Its connection closed before the body's end. */
  cut: boolean;
}

/** An upstream recording every request, whole or cut; `until` waits for a state of the record. */
async function upstream() {
  const requests: Seen[] = [];
  let connections = 0;
  const waiters: { holds: () => boolean; done: () => void }[] = [];
  const changed = () => {
    for (const waiter of waiters.splice(0)) {
      if (waiter.holds()) waiter.done();
      else waiters.push(waiter);
    }
  };
  const server = createServer((request: IncomingMessage, response) => {
    const seen: Seen = { bytes: [], received: 0, complete: false, cut: false };
    requests.push(seen);
    request.on('data', (chunk: Buffer) => {
      seen.bytes.push(chunk);
      seen.received += chunk.length;
      changed();
    });
    request.on('end', () => {
      seen.complete = true;
      const body = JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 1 },
      });
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
      changed();
    });
    request.on('close', () => {
      if (!seen.complete) seen.cut = true;
      changed();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    connections: () => connections,
    until: (holds: () => boolean) =>
      new Promise<void>((done) => {
        if (holds()) done();
        else waiters.push({ holds, done });
      }),
  };
}

async function proxyTo(
  url: string,
  maxContextTokens: number,
  logs: ProxyLogEntry[] = [],
): Promise<RunningProxy> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens });
  const proxy = await startProxy({ upstream: url, manager, port: 0, log: (entry) => logs.push(entry) });
  cleanups.push(() => proxy.close({ graceMs: 1000 }));
  return proxy;
}

/** A Chat Completions body of `turns` question/answer pairs, ~1.3 KB each. */
function body(turns: number): Buffer {
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'user',
      content: `question ${i}: ${'how does the parser treat this input? '.repeat(16)}`,
    });
    messages.push({
      role: 'assistant',
      content: `answer ${i}: ${'it reads the tokens in order, one by one. '.repeat(16)}`,
    });
  }
  return Buffer.from(JSON.stringify({ model: 'gpt-4o', messages }));
}

/**
 * Posts `bytes` to the proxy: the first `split` bytes, then (once `between` resolves) the rest.
 * Resolves with the status and the answer's text.
 */
function post(
  proxy: RunningProxy,
  bytes: Buffer,
  split = bytes.length,
  between: () => Promise<void> = async () => {},
) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpRequest(
      `${proxy.url}/v1/chat/completions`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': bytes.length,
          authorization: 'Bearer t',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    request.on('error', reject);
    request.write(bytes.subarray(0, split));
    between().then(() => request.end(bytes.subarray(split)), reject);
  });
}

describe('a large body forwarded as it arrives', () => {
  it('reaches the upstream before its last byte left the client, byte for byte when nothing is compacted', async () => {
    const provider = await upstream();
    const proxy = await proxyTo(provider.url, 1_000_000);
    const bytes = body(500);
    expect(bytes.length).toBeGreaterThan(600_000);
    // The rest is sent only once the upstream holds the first 150 KB: a proxy that waits for
    // the whole body never gets there.
    const answer = await post(proxy, bytes, 400_000, () =>
      provider.until(() => (provider.requests[0]?.received ?? 0) >= 150_000),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).choices[0].message.content).toBe('ok');
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]!.complete).toBe(true);
    expect(Buffer.concat(provider.requests[0]!.bytes).equals(bytes)).toBe(true);
  });

  it('a compacted body goes anew, the early call left incomplete; the conversation is not forwarded early again', async () => {
    const provider = await upstream();
    const logs: ProxyLogEntry[] = [];
    const proxy = await proxyTo(provider.url, 8_000, logs);
    for (const turns of [60, 61, 62]) {
      const bytes = body(turns);
      const answer = await post(proxy, bytes);
      expect(answer.status).toBe(200);
      const last = provider.requests.filter((seen) => seen.complete).at(-1)!;
      const sent = JSON.parse(Buffer.concat(last.bytes).toString()) as { messages: unknown[] };
      expect(sent.messages.length).toBeLessThan(turns * 2 + 1);
    }
    expect(logs[0]!.applied).toBe(true);
    // The first call was a conversation new to the proxy: opened early, then cut at the decision.
    await provider.until(() => provider.requests.filter((seen) => seen.cut).length === 1);
    const cut = provider.requests.filter((seen) => seen.cut);
    expect(cut[0]!.received).toBeLessThan(body(60).length);
    // Its next two were known as compacted: one complete request each, no call cut.
    expect(provider.requests.filter((seen) => seen.complete)).toHaveLength(3);
    expect(provider.requests).toHaveLength(4);
  });

  it('a client that goes away mid-body leaves only an incomplete call upstream', async () => {
    const provider = await upstream();
    const proxy = await proxyTo(provider.url, 1_000_000);
    const bytes = body(500);
    const request = httpRequest(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': bytes.length },
    });
    request.on('error', () => {});
    request.write(bytes.subarray(0, 400_000));
    await provider.until(() => (provider.requests[0]?.received ?? 0) >= 150_000);
    request.destroy();
    await provider.until(() => provider.requests[0]!.cut);
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]!.complete).toBe(false);
  });
});

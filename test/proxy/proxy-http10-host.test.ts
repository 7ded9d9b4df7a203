/**
 * RFC 9112 3.2: a client MUST send `Host` in every HTTP/1.1 request, and a server MUST answer
 * 400 to an HTTP/1.1 request without one; HTTP/1.0 has no such rule (HAProxy's default
 * `option httpchk`, old monitoring probes and `curl --http1.0 -H 'Host:'` send none). The
 * proxy routes by path alone (the upstream is configured), so an HTTP/1.0 request without
 * `Host` is served; an HTTP/1.1 one is still a 400. Over raw sockets on loopback.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Sends `text` on a fresh socket and resolves with all the server wrote before closing. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

describe('a request without Host', () => {
  it('is served in HTTP/1.0 (health check, forwarded and compacted routes)', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { port } = running.proxy;
    const health = await rawExchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(health).toMatch(/^HTTP\/1\.1 200/);
    expect(health).toContain('{"status":"ok"}');
    const chat = await rawExchange(
      port,
      `POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(chat).toMatch(/^HTTP\/1\.1 200/);
    expect(chat).toContain('"ok"');
    expect(running.provider.requests).toHaveLength(1);
    // The upstream gets its own Host, as for any request.
    expect(running.provider.requests[0]!.headers.host).toBe(new URL(running.provider.url).host);
  });

  it('is still a 400 in HTTP/1.1', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const answer = await rawExchange(
      running.proxy.port,
      'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
  });
});

/**
 * Requests the proxy answers itself on forwarded paths, each with its log line: a WebSocket
 * upgrade (the Realtime API; 501, never sent on as a plain GET with its `Upgrade` dropped), a
 * body over the limit (413) and a path it does not forward (404), the upstream never called.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** Writes `text` on a new connection; resolves with the answer once its body is in (by length, or chunked). */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
      const head = out.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(out);
      const whole = length ? out.length >= head + 4 + Number(length[1]) : out.endsWith('\r\n0\r\n\r\n');
      if (head >= 0 && whole) {
        socket.destroy();
        resolve(out);
      }
    });
    socket.on('error', reject);
  });
}

describe('requests the proxy refuses on forwarded paths', () => {
  it("a WebSocket upgrade: 501 in the client's error shape, the upstream never called, a log line", async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const answer = await rawRequest(
      running.proxy.port,
      'GET /v1/realtime?model=gpt-4o-realtime-preview HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n' +
        'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 501 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { type: 'upgrade_not_supported' },
    });
    expect(running.provider.requests).toHaveLength(0);
    expect(running.logs).toEqual([{ method: 'GET', path: '/v1/realtime', status: 501 }]);
  });

  it('a body over the limit and a path not forwarded: a log line each', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 1000 });
    const { proxy, provider, logs } = running;
    const large = await fetch(`${proxy.url}/v1/embeddings`, { method: 'POST', body: 'x'.repeat(2000) });
    expect(large.status).toBe(413);
    await large.text();
    const answer = await rawRequest(proxy.port, 'GET /v1/a%20b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(provider.requests).toHaveLength(0);
    expect(logs).toEqual([
      { method: 'POST', path: '/v1/embeddings', status: 413 },
      { method: 'GET', path: '/v1/a%20b', status: 404 },
    ]);
  });
});

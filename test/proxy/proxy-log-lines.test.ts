/**
 * The proxy's log lines hold nothing a request can use to forge a line or drive the
 * operator's terminal: the path is logged as sent (percent-encoded, so `%0A` and `%1B` stay
 * text), and a session header with a control character (C0, DEL or C1) is refused.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../src/proxy/index.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** One raw request line (a target no client library would send as is); resolves with the answer. */
function rawGet(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** A chat request with `session` as its session header, written as latin1 bytes; resolves with the status. */
function withSession(url: string, session: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const req = request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { 'content-type': 'application/json', [SESSION_HEADER]: session } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('log lines', () => {
  it('hold no control character a request sent', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, logs } = running;
    for (const target of ['/x%0APOST%20/v1/messages%20200%20session=forged', '/%1B%5B2J', '/healthz%0A'])
      expect(await rawGet(proxy.port, target)).toMatch(/^HTTP\/1\.1 404/);
    expect(logs.map((entry) => entry.path)).toEqual([
      '/x%0APOST%20/v1/messages%20200%20session=forged',
      '/%1B%5B2J',
      '/healthz%0A',
    ]);
    // C1's CSI (0x9b) as a header byte: refused like the C0 controls.
    expect(await withSession(proxy.url, 'agent-\u009b31m')).toBe(400);
    expect(await withSession(proxy.url, 'agent-42')).toBe(200);
    expect(logs.at(-1)).toMatchObject({ path: '/v1/chat/completions', session: 'agent-42' });
  });

  it('hold no key a request put in its path or query string', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, logs } = running;
    const key = 'AIzaSyD4kL9mQ2xW7vB3nR8tY1uE6oP5aS0dF2g';
    for (const target of [
      `/v1/models/${key}/generateContent`,
      `/v1beta/models/gemini-pro:generateContent/${key}`,
      `/v1/chat/completions?key=${key}`,
    ])
      await rawGet(proxy.port, target);
    expect(logs).toHaveLength(3);
    const logged = JSON.stringify(logs);
    for (let at = 0; at + 8 <= key.length; at++) expect(logged).not.toContain(key.slice(at, at + 8));
    expect(logs[0]?.path).toMatch(/^\/v1\/models\//);
  });

  it("hold no secret of the manager's own rules (extraPatterns) a request put in its path", async () => {
    const secret = 'acct-9f3b7c1d5e2a4f60';
    running = await startProxiedProvider(() => ({ text: 'ok' }), {
      manager: { redaction: { extraPatterns: ['acct-[0-9a-f]{16}'] } },
    });
    const { proxy, logs } = running;
    await rawGet(proxy.port, `/v1/accounts/${secret}/chat/completions`);
    expect(logs).toHaveLength(1);
    expect(logs[0]?.path).toMatch(/^\/v1\/accounts\//);
    const logged = JSON.stringify(logs);
    for (let at = 0; at + 8 <= secret.length; at++) expect(logged).not.toContain(secret.slice(at, at + 8));
  });
});

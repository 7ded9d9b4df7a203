/**
 * `createProxyApp` served by a server of the caller's own (`@hono/node-server`'s `serve`, and
 * `node:http` with the adapter's request listener), given `handleExpectContinue` as docs/proxy.md
 * says: `Expect: 100-continue` with a declared length over the body limit gets its 413 before any
 * `100 Continue` (the client never sends the body) and the connection closes; a body within the
 * limit gets its 100 and its answer. The client is a raw socket that sends the head alone.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { getRequestListener, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { closeUpstream, createProxyApp } from '../../src/proxy/create-proxy-app.js';
import { handleExpectContinue } from '../../src/proxy/index.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The proxy app (body limit 1,000 bytes) on a server `serveApp` makes, and its provider. */
async function ownServer(serveApp: (fetch: never) => Server, calls = 1) {
  const provider: ProviderTestServer = await startProviderTestServer({});
  closing.push(() => provider.close());
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });
  const app = createProxyApp({ upstream: provider.url, manager, maxBodyBytes: 1000 });
  const server = serveApp(app.fetch as never);
  for (let call = 0; call < calls; call++) handleExpectContinue(server, app);
  if (!server.listening) await new Promise<void>((done) => server.once('listening', done));
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
    closeUpstream(app);
  });
  return { provider, server, port: (server.address() as AddressInfo).port };
}

/** A socket that gathers what the server writes; `until` resolves once the text matches. */
function rawClient(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let text = '';
  const waiting: { pattern: RegExp; done: (text: string) => void }[] = [];
  const check = () => {
    for (const wait of [...waiting])
      if (wait.pattern.test(text)) {
        waiting.splice(waiting.indexOf(wait), 1);
        wait.done(text);
      }
  };
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    check();
  });
  const ended = new Promise<string>((done) => socket.on('close', () => done(text)));
  return {
    socket,
    ended,
    until: (pattern: RegExp) =>
      new Promise<string>((done) => {
        waiting.push({ pattern, done });
        check();
      }),
  };
}

const head = (path: string, length: number) =>
  `POST ${path} HTTP/1.1\r\nHost: proxy.test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

/** A final (not 1xx) status line and the end of its head. */
const FINAL_HEAD = /HTTP\/1\.1 [2-5]\d\d [^\r]*\r\n[\s\S]*?\r\n\r\n/;

const SERVERS = {
  "@hono/node-server's serve": (fetch: never) => serve({ fetch, port: 0, hostname: '127.0.0.1' }) as Server,
  'node:http with the adapter listener': (fetch: never) =>
    createServer(getRequestListener(fetch)).listen(0, '127.0.0.1'),
};

describe.each(Object.entries(SERVERS))(
  'createProxyApp on %s with handleExpectContinue',
  (_name, serveApp) => {
    it('a declared length over the limit: 413 with no 100 Continue first, body never sent, connection closed', async () => {
      const { provider, port } = await ownServer(serveApp);
      for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
        const client = rawClient(port);
        client.socket.write(head(path, 10_000_000_000));
        const answer = await client.until(FINAL_HEAD);
        expect(answer).not.toContain('100 Continue');
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(answer.toLowerCase()).toContain('connection: close');
        expect(await client.ended).toContain('request_too_large');
      }
      expect(provider.requests).toHaveLength(0);
    });

    it('a body within the limit: 100 Continue, then the answer', async () => {
      const { provider, port } = await ownServer(serveApp);
      const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      const client = rawClient(port);
      client.socket.write(head('/v1/chat/completions', body.length));
      expect(await client.until(/\r\n\r\n/)).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
      client.socket.write(body);
      expect(await client.until(FINAL_HEAD)).toMatch(/HTTP\/1\.1 200 /);
      client.socket.end();
      expect(provider.requests).toHaveLength(1);
    });

    it('called twice on a server: each request still handled once; an app not made by createProxyApp refused', async () => {
      const { provider, server, port } = await ownServer(serveApp, 2);
      expect(() => handleExpectContinue(server, new Hono())).toThrow(/made by createProxyApp/);
      const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      const client = rawClient(port);
      client.socket.write(head('/v1/chat/completions', body.length));
      await client.until(/100 Continue\r\n\r\n/);
      client.socket.write(body);
      expect(await client.until(FINAL_HEAD)).toMatch(/HTTP\/1\.1 200 /);
      client.socket.end();
      expect(provider.requests).toHaveLength(1);
    });
  },
);

/**
 * `Expect: 100-continue` (curl and others send it before a large body) answered by the proxy's
 * body limit. Without a `checkContinue` listener Node answers `100 Continue` at once and the
 * client uploads a body the proxy then refuses. With it, a declared length over the limit gets
 * its 413 first, no 100, and the connection closes after it (the body, if the client sends it
 * anyway, is never read); any other request gets its 100 and goes on as usual.
 */
import type { Server } from 'node:http';
import type { Hono } from 'hono';
import { CompactError } from '../core/errors.js';
import { bodyLimitOf } from './create-proxy-app.js';

/** Servers already given the listener: a second one would hand each request to the app twice. */
const guarded = new WeakSet<Server>();

/**
 * Makes `server` answer `Expect: 100-continue` by the body limit of `app` (made by
 * {@link createProxyApp}), as {@link startProxy} does. Call it on a server of your own that
 * serves the app (`@hono/node-server`'s `serve`, or `node:http` with its request listener),
 * before it takes requests. The listener applies to every request of the server.
 *
 * @example
 * ```ts
 * const app = createProxyApp({ upstream: 'https://api.anthropic.com', manager });
 * const server = serve({ fetch: app.fetch, port: 8787, hostname: '127.0.0.1' });
 * handleExpectContinue(server as Server, app);
 * ```
 */
export function handleExpectContinue(server: Server, app: Hono): void {
  const maxBody = bodyLimitOf(app);
  if (maxBody === undefined)
    throw new CompactError('invalid_config', 'handleExpectContinue takes an app made by createProxyApp');
  if (guarded.has(server)) return;
  guarded.add(server);
  server.on('checkContinue', (request, response) => {
    const length = request.headers['content-length'];
    if (length !== undefined && /^\d+$/.test(length) && Number(length) > maxBody)
      response.shouldKeepAlive = false;
    else response.writeContinue();
    server.emit('request', request, response);
  });
}

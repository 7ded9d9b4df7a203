/**
 * The proxy as a Hono app: `POST /v1/chat/completions`, `/v1/responses` and `/v1/messages`
 * are compacted, then forwarded to the configured upstream; any other `/v1/...` request is
 * forwarded as it is; `GET /healthz` answers locally. The upstream's answer is piped back as
 * it arrives (status, headers and body; SSE included), its usage read on the side and fed to
 * the manager.
 */

import { Readable } from 'node:stream';
import type { Context, Hono } from 'hono';
import { clock } from '../core/clock.js';
import { CompactError } from '../core/errors.js';
import { loadHono } from './load-peers.js';
import { ProxyHandler } from './proxy-handler.js';
import type { CompactionProxyOptions } from './proxy-options.js';
import { PROXY_ROUTES } from './proxy-routes.js';
import { callUpstream, errorShapeOf, proxyError } from './upstream/call-upstream.js';
import {
  forwardHeaders,
  isAnthropicRequest,
  parseUpstream,
  upstreamUrl,
} from './upstream/forward-request.js';
import { passBack } from './upstream/pass-back.js';
import { UpstreamClient } from './upstream/upstream-client.js';

/** Why a request asking for another protocol (`Upgrade: websocket`, the Realtime API) is refused. */
const UPGRADE_REFUSED =
  'the proxy does not carry WebSocket or other upgraded connections (the Realtime API): connect to the provider directly';

/** Each app's connections to its upstream, closed by {@link closeUpstream}. */
const upstreamClients = new WeakMap<Hono, UpstreamClient>();

/** `upstreamIdleMs` checked: a positive whole number of milliseconds, or the default. */
function idleMsOf(value: number | undefined): number | undefined {
  if (value === undefined || (Number.isSafeInteger(value) && value > 0)) return value;
  throw new CompactError('invalid_config', `upstreamIdleMs must be a positive whole number of milliseconds`, {
    issues: [{ path: ['upstreamIdleMs'], message: 'must be a positive whole number of milliseconds' }],
  });
}

/** Closes the kept connections of an app made by {@link createProxyApp} (a later request opens one again). */
export function closeUpstream(app: Hono): void {
  upstreamClients.get(app)?.close();
}

/** Each app's body limit, read by {@link bodyLimitOf}. */
const bodyLimits = new WeakMap<Hono, number>();

/** The body limit of an app made by {@link createProxyApp} (`undefined` for any other). */
export function bodyLimitOf(app: Hono): number | undefined {
  return bodyLimits.get(app);
}

/**
 * The proxy app (mount it in your own Hono app, or serve it with {@link startProxy}). On a
 * server of your own, {@link handleExpectContinue} makes `Expect: 100-continue` wait for the
 * body limit as `startProxy` does (without it Node answers `100 Continue` at once).
 *
 * @example
 * ```ts
 * const app = createProxyApp({ upstream: 'https://api.anthropic.com', manager: new CompactManager({ model: 'claude-sonnet-4-5' }) });
 * const server = serve({ fetch: app.fetch, port: 8787, hostname: '127.0.0.1' });
 * handleExpectContinue(server as Server, app);
 * ```
 */
export function createProxyApp(options: CompactionProxyOptions): Hono {
  const hono = loadHono();
  const upstream = parseUpstream(options.upstream);
  const client = new UpstreamClient(upstream, idleMsOf(options.upstreamIdleMs));
  const handler = new ProxyHandler(options, upstream, client);
  const app = new hono.Hono();
  upstreamClients.set(app, client);
  bodyLimits.set(app, handler.maxSize);
  const shapeOf = (c: Context) => errorShapeOf(undefined, c.req.raw.headers);
  app.onError((error, c) => {
    // Whatever went wrong is said without the request's content or headers.
    const route = PROXY_ROUTES.find((one) => c.req.method === 'POST' && one.path === c.req.path);
    const shape = errorShapeOf(route?.format, c.req.raw.headers);
    return proxyError(500, 'proxy_error', `the proxy failed: ${(error as Error).name}`, shape);
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.on(['GET', 'HEAD'], '/', (c) => c.body(null, 200));
  for (const route of PROXY_ROUTES) app.post(route.path, (c) => handler.compactedCall(c, route));
  const maxSize = handler.maxSize;
  app.all(
    '/v1/*',
    hono.bodyLimit({ maxSize, onError: (c) => refused(c, handler.tooLarge(shapeOf(c))) }),
    (c) => handler.unlessClientClosed(c, {}, () => forwarded(c)),
  );
  /** The proxy's own answer to a request it does not forward, logged. */
  function refused(c: Context, response: Response): Response {
    handler.done(c, {}, response.status);
    return response;
  }
  /** A request the proxy forwards as it came. */
  async function forwarded(c: Context): Promise<Response> {
    const start = clock.now();
    const url = upstreamUrl(
      upstream,
      c.req.path,
      new URL(c.req.url).search,
      isAnthropicRequest(c.req.raw.headers),
    );
    if (!url)
      return refused(c, proxyError(404, 'not_found', 'the proxy does not forward this path', shapeOf(c)));
    // Sent on as a plain request (`Upgrade` is hop-by-hop), it would reach the upstream mangled.
    if (c.req.header('upgrade') !== undefined)
      return refused(c, proxyError(501, 'upgrade_not_supported', UPGRADE_REFUSED, shapeOf(c)));
    const method = c.req.method;
    const raw = c.req.raw.body;
    const answer = await callUpstream(
      client,
      {
        url,
        method,
        headers: forwardHeaders(c.req.raw.headers),
        body: method === 'GET' || method === 'HEAD' || raw === null ? null : Readable.fromWeb(raw as never),
        signal: c.req.raw.signal,
      },
      shapeOf(c),
    );
    if (answer instanceof Response) {
      handler.done(c, {}, answer.status);
      return answer;
    }
    const status = answer.response.statusCode ?? 502;
    return passBack(c, answer.response, {
      extra: {},
      onEnd: (end) => handler.ended(c, {}, status, start, end),
    });
  }
  app.all('*', (c) => {
    const response = proxyError(404, 'not_found', 'the proxy serves /v1/... and /healthz only', shapeOf(c));
    handler.done(c, {}, 404);
    return response;
  });
  return app;
}

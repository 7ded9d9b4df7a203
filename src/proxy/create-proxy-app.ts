/**
 * The proxy as a Hono app: `POST /v1/chat/completions`, `/v1/responses` and `/v1/messages`
 * are compacted, then forwarded to the configured upstream; any other `/v1/...` request is
 * forwarded as it is; `GET /healthz` answers locally. The upstream's answer is piped back as
 * it arrives (status, headers and body; SSE included), its usage read on the side and fed to
 * the manager.
 */
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { feedUsage } from '../adapters/overflow-recovery.js';
import { isCompactError } from '../core/errors.js';
import type { MessageFormat } from '../core/messages/message.js';
import { compactRequest, LastViews } from './compact-request.js';
import { forwardHeaders, parseUpstream, responseHeaders, upstreamUrl } from './forward-request.js';
import { DEFAULT_REUSE_BYTES, ParsedBodies } from './parsed-bodies.js';
import { type CompactionProxyOptions, DEFAULT_MAX_BODY_BYTES, type ProxyLogEntry } from './proxy-options.js';
import { PROXY_ROUTES, type ProxyRoute } from './proxy-routes.js';
import { readBody } from './read-body.js';
import { SESSION_HEADER } from './session-of-request.js';
import { usageTap } from './usage-tap.js';

/** An error the proxy answers itself, in the providers' shape (`{error: {type, message}}`). */
function proxyError(status: number, type: string, message: string): Response {
  return new Response(JSON.stringify({ type: 'error', error: { type, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

interface Forward {
  url: URL;
  method: string;
  headers: Headers;
  body: ReadableStream<Uint8Array> | Buffer | null;
  signal: AbortSignal;
}

/** Calls the upstream; an unreachable upstream is a 502 in the providers' error shape. */
async function callUpstream(forward: Forward): Promise<Response> {
  try {
    return await fetch(forward.url, {
      method: forward.method,
      headers: forward.headers,
      body: forward.body,
      signal: forward.signal,
      redirect: 'manual',
      ...(forward.body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);
  } catch (error) {
    if (forward.signal.aborted) throw error;
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return proxyError(502, 'upstream_unreachable', `the upstream could not be reached (${cause})`);
  }
}

/** The upstream's answer as the client's, usage read on the way when `format` is given. */
function passBack(
  upstream: Response,
  tap: { format: MessageFormat; onUsage: Parameters<typeof usageTap>[2] } | undefined,
  extra: Record<string, string>,
): Response {
  const headers = responseHeaders(upstream.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  const streamed = (upstream.headers.get('content-type') ?? '').includes('text/event-stream');
  const body =
    upstream.body && tap && upstream.ok
      ? upstream.body.pipeThrough(usageTap(tap.format, streamed, tap.onUsage))
      : upstream.body;
  return new Response(body, { status: upstream.status, statusText: upstream.statusText, headers });
}

/**
 * The proxy app (mount it in your own Hono app, or serve it with {@link startProxy}).
 *
 * @example
 * ```ts
 * const app = createProxyApp({ upstream: 'https://api.anthropic.com', manager: new CompactManager({ model: 'claude-sonnet-4-5' }) });
 * serve({ fetch: app.fetch, port: 8787, hostname: '127.0.0.1' });
 * ```
 */
export function createProxyApp(options: CompactionProxyOptions): Hono {
  const upstream = parseUpstream(options.upstream);
  const { manager } = options;
  const maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log;
  const lastViews = new LastViews();
  const bodies = new ParsedBodies(options.reuseBytes ?? DEFAULT_REUSE_BYTES);
  const app = new Hono();
  const tooLarge = () =>
    proxyError(413, 'request_too_large', `the request body is over the proxy's limit of ${maxSize} bytes`);
  app.onError((error) => {
    // Whatever went wrong is said without the request's content or headers.
    return proxyError(500, 'proxy_error', `the proxy failed: ${(error as Error).name}`);
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.on(['GET', 'HEAD'], '/', (c) => c.body(null, 200));
  const done = (c: Context, entry: Partial<ProxyLogEntry>, status: number) =>
    log?.({ method: c.req.method, path: c.req.path, status, ...entry });

  for (const route of PROXY_ROUTES) {
    app.post(route.path, async (c) => {
      const entry: Partial<ProxyLogEntry> = {};
      const response = await compactedCall(c, route, entry);
      done(c, entry, response.status);
      return response;
    });
  }
  app.all('/v1/*', bodyLimit({ maxSize, onError: tooLarge }), async (c) => {
    const url = upstreamUrl(upstream, c.req.path, new URL(c.req.url).search);
    if (!url) return proxyError(404, 'not_found', 'the proxy does not forward this path');
    const method = c.req.method;
    const response = passBack(
      await callUpstream({
        url,
        method,
        headers: forwardHeaders(c.req.raw.headers),
        body: method === 'GET' || method === 'HEAD' ? null : c.req.raw.body,
        signal: c.req.raw.signal,
      }),
      undefined,
      {},
    );
    done(c, {}, response.status);
    return response;
  });
  app.all('*', (c) => {
    const response = proxyError(404, 'not_found', 'the proxy serves /v1/... and /healthz only');
    done(c, {}, 404);
    return response;
  });

  async function compactedCall(
    c: Context,
    route: ProxyRoute,
    entry: Partial<ProxyLogEntry>,
  ): Promise<Response> {
    let mark = performance.now();
    const bytes = await readBody(c, maxSize);
    if (bytes === undefined) return tooLarge();
    const started = performance.now();
    entry.readMs = started - mark;
    const parsed = bodies.parse(route, bytes);
    if (parsed === undefined)
      return proxyError(400, 'invalid_request_error', 'the request body is not a JSON object');
    entry.parseMs = performance.now() - started;
    entry.reused = parsed.reused;
    const signal = c.req.raw.signal;
    let compacted: Awaited<ReturnType<typeof compactRequest>>;
    try {
      compacted = await compactRequest(manager, route, parsed, {
        sessionHeader: c.req.header(SESSION_HEADER),
        signal,
        cacheBreakpoints: options.cacheBreakpoints ?? true,
        lastViews,
        bodies,
      });
    } catch (error) {
      if (isCompactError(error, 'invalid_config'))
        return proxyError(400, 'invalid_request_error', error.message);
      throw error;
    }
    Object.assign(entry, compacted.log, { prepareMs: performance.now() - started });
    const url = upstreamUrl(upstream, route.path, new URL(c.req.url).search)!;
    const session = compacted.session;
    mark = performance.now();
    const upstreamResponse = await callUpstream({
      url,
      method: 'POST',
      headers: forwardHeaders(c.req.raw.headers),
      body: compacted.body,
      signal,
    });
    entry.upstreamMs = performance.now() - mark;
    const tap =
      session === undefined
        ? undefined
        : {
            format: route.format,
            onUsage: (usage: Parameters<typeof feedUsage>[2]) => feedUsage(manager, session, usage),
          };
    return passBack(upstreamResponse, tap, session === undefined ? {} : { [SESSION_HEADER]: session });
  }
  return app;
}

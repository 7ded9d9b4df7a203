/**
 * The proxy as a Hono app: `POST /v1/chat/completions`, `/v1/responses` and `/v1/messages`
 * are compacted, then forwarded to the configured upstream; any other `/v1/...` request is
 * forwarded as it is; `GET /healthz` answers locally. The upstream's answer is piped back as
 * it arrives (status, headers and body; SSE included), its usage read on the side and fed to
 * the manager.
 */

import { Readable } from 'node:stream';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { feedUsage } from '../adapters/overflow-recovery.js';
import { isCompactError } from '../core/errors.js';
import { compactRequest, LastViews } from './compact-request.js';
import { EARLY_MIN_BYTES, EarlyForward, PREFIX_BYTES, RewrittenSessions } from './early-forward.js';
import { forwardHeaders, parseUpstream, upstreamUrl } from './forward-request.js';
import { DEFAULT_REUSE_BYTES, ParsedBodies } from './parsed-bodies.js';
import { passBack } from './pass-back.js';
import { type CompactionProxyOptions, DEFAULT_MAX_BODY_BYTES, type ProxyLogEntry } from './proxy-options.js';
import { PROXY_ROUTES, type ProxyRoute } from './proxy-routes.js';
import { type BodyProgress, type ReadBody, readBody } from './read-body.js';
import { headerSession, SESSION_HEADER } from './session-of-request.js';
import { type UpstreamAnswer, type UpstreamCall, UpstreamClient } from './upstream-client.js';

/** An error the proxy answers itself, in the providers' shape (`{error: {type, message}}`). */
function proxyError(status: number, type: string, message: string): Response {
  return new Response(JSON.stringify({ type: 'error', error: { type, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * Calls the upstream (through the call opened early when there is one); an unreachable upstream
 * is a 502 in the providers' error shape.
 */
async function callUpstream(
  client: UpstreamClient,
  call: UpstreamCall,
  early?: EarlyForward,
): Promise<UpstreamAnswer | Response> {
  try {
    const answer =
      early !== undefined && Buffer.isBuffer(call.body) ? await early.release(call.body) : undefined;
    return answer ?? (await client.send(call));
  } catch (error) {
    if (call.signal.aborted) throw error;
    const cause = (error as { code?: string }).code ?? (error as Error).message;
    return proxyError(502, 'upstream_unreachable', `the upstream could not be reached (${cause})`);
  }
}

/** Each app's connections to its upstream, closed by {@link closeUpstream}. */
const upstreamClients = new WeakMap<Hono, UpstreamClient>();

/** Closes the kept connections of an app made by {@link createProxyApp} (a later request opens one again). */
export function closeUpstream(app: Hono): void {
  upstreamClients.get(app)?.close();
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
  const client = new UpstreamClient(upstream);
  const rewritten = new RewrittenSessions();
  const forwardEarly = options.forwardEarly ?? true;
  const app = new Hono();
  upstreamClients.set(app, client);
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

  for (const route of PROXY_ROUTES) app.post(route.path, (c) => compactedCall(c, route));
  app.all('/v1/*', bodyLimit({ maxSize, onError: tooLarge }), async (c) => {
    const url = upstreamUrl(upstream, c.req.path, new URL(c.req.url).search);
    if (!url) return proxyError(404, 'not_found', 'the proxy does not forward this path');
    const method = c.req.method;
    const raw = c.req.raw.body;
    const answer = await callUpstream(client, {
      url,
      method,
      headers: forwardHeaders(c.req.raw.headers),
      body: method === 'GET' || method === 'HEAD' || raw === null ? null : Readable.fromWeb(raw as never),
      signal: c.req.raw.signal,
    });
    if (answer instanceof Response) {
      done(c, {}, answer.status);
      return answer;
    }
    const status = answer.response.statusCode ?? 502;
    return passBack(c, answer.response, { extra: {}, onSent: () => done(c, {}, status) });
  });
  app.all('*', (c) => {
    const response = proxyError(404, 'not_found', 'the proxy serves /v1/... and /healthz only');
    done(c, {}, 404);
    return response;
  });

  /** A compacted route's request, its log line written once the answer's first byte went back. */
  async function compactedCall(c: Context, route: ProxyRoute): Promise<Response> {
    const entry: Partial<ProxyLogEntry> = {};
    const response = await prepareAndCall(c, route, entry);
    if (response instanceof Response) {
      done(c, entry, response.status);
      return response;
    }
    const { answer, session, read } = response;
    entry.upstreamMs = answer.headAt - answer.startedAt;
    entry.forwardMs = answer.writtenAt - read.endedAt;
    const [before, after] = [read.endedCpu, answer.writtenCpu];
    entry.forwardCpuMs = (after.user + after.system - before.user - before.system) / 1000;
    const status = answer.response.statusCode ?? 502;
    return passBack(c, answer.response, {
      extra: session === undefined ? {} : { [SESSION_HEADER]: session },
      tap:
        session === undefined
          ? undefined
          : { format: route.format, onUsage: (usage) => feedUsage(manager, session, usage) },
      onSent: (at) => {
        if (at !== undefined) entry.returnMs = at - answer.headAt;
        done(c, entry, status);
      },
    });
  }

  /** Reads, parses and compacts the request, and calls the upstream with it. */
  async function prepareAndCall(
    c: Context,
    route: ProxyRoute,
    entry: Partial<ProxyLogEntry>,
  ): Promise<Response | { answer: UpstreamAnswer; session: string | undefined; read: ReadBody }> {
    const mark = performance.now();
    const url = upstreamUrl(upstream, route.path, new URL(c.req.url).search)!;
    const call = {
      url,
      method: 'POST',
      headers: forwardHeaders(c.req.raw.headers),
      signal: c.req.raw.signal,
    };
    let early: EarlyForward | undefined;
    try {
      const opened = forwardEarly ? earlyCall(c, route, call, (forward) => (early = forward)) : undefined;
      const read = await readBody(c, maxSize, opened);
      if (read === undefined) return tooLarge();
      return await compactAndCall(c, route, entry, read, call, early, mark);
    } finally {
      // Released when the client's bytes went; anything else (compacted, refused, failed) drops it.
      (early as EarlyForward | undefined)?.cancel();
    }
  }

  /**
   * What forwards a body early as it is read (see early-forward.ts): opens the call once its
   * first bytes are in, unless its conversation's last request was rewritten.
   */
  function earlyCall(
    c: Context,
    route: ProxyRoute,
    call: Omit<UpstreamCall, 'body'>,
    opened: (forward: EarlyForward) => void,
  ): BodyProgress | undefined {
    let forward: EarlyForward | undefined;
    let decided = false;
    let named: string | undefined;
    try {
      named = headerSession(c.req.header(SESSION_HEADER));
    } catch {
      return undefined;
    }
    return (bytes, size) => {
      if (!decided) {
        if (bytes.length < EARLY_MIN_BYTES || bytes.length > maxSize) decided = true;
        else if (size < Math.min(PREFIX_BYTES, bytes.length)) return;
        if (decided) return;
        decided = true;
        if (!wasRewritten(route, named, bytes.subarray(0, Math.min(size, PREFIX_BYTES)))) {
          forward = new EarlyForward(client, call, bytes.length);
          opened(forward);
        }
      }
      forward?.advance(bytes, size);
    };
  }

  /** Whether the conversation of a body starting with `prefix` (or the session `named`) had its last request rewritten. */
  function wasRewritten(route: ProxyRoute, named: string | undefined, prefix: Buffer): boolean {
    if (named !== undefined) return rewritten.has(named);
    for (const session of rewritten.values()) if (bodies.startsWith(session, route.path, prefix)) return true;
    return false;
  }

  /** Parses and compacts the request read, and calls the upstream with it. */
  async function compactAndCall(
    c: Context,
    route: ProxyRoute,
    entry: Partial<ProxyLogEntry>,
    read: ReadBody,
    call: Omit<UpstreamCall, 'body'>,
    early: EarlyForward | undefined,
    mark: number,
  ): Promise<Response | { answer: UpstreamAnswer; session: string | undefined; read: ReadBody }> {
    const readAt = read.endedAt;
    entry.readMs = readAt - mark;
    const parsed = bodies.parse(route, read.bytes);
    if (parsed === undefined)
      return proxyError(400, 'invalid_request_error', 'the request body is not a JSON object');
    entry.parseMs = performance.now() - readAt;
    entry.reused = parsed.reused;
    const signal = call.signal;
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
    Object.assign(entry, compacted.log, { prepareMs: performance.now() - readAt });
    const asSent = compacted.body === read.bytes;
    if (compacted.session !== undefined) rewritten.note(compacted.session, !asSent);
    const answer = await callUpstream(client, { ...call, body: compacted.body }, asSent ? early : undefined);
    return answer instanceof Response ? answer : { answer, session: compacted.session, read };
  }
  return app;
}

/**
 * The proxy's handling of a compacted route: read the body (forwarding it early when it may go
 * as sent), parse, compact, call the upstream, pipe the answer back and feed its usage to the
 * manager, one log line per request.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { feedUsage } from '../adapters/overflow-recovery.js';
import { clock } from '../core/clock.js';
import { isCompactError } from '../core/errors.js';
import type { CompactManager } from '../core/manager/compact-manager.js';
import { managerRedactorOf } from '../core/manager/manager-redactors.js';
import { getDefaultRedactor, warmDefaultRedactor } from '../core/redaction/redactor.js';
import {
  contentCodings,
  decodable,
  decodableCodings,
  decodeBody,
  unsupportedCoding,
} from './bodies/decode-body.js';
import { DEFAULT_REUSE_BYTES, ParsedBodies } from './bodies/parsed-bodies.js';
import { type BodyProgress, type ReadBody, readBody } from './bodies/read-body.js';
import { compactRequest, LastViews } from './compact-request.js';
import { type CompactionProxyOptions, DEFAULT_MAX_BODY_BYTES, type ProxyLogEntry } from './proxy-options.js';
import type { ProxyRoute } from './proxy-routes.js';
import { KnownConversations } from './sessions/known-conversations.js';
import { headerSession, SESSION_HEADER } from './sessions/session-of-request.js';
import { callUpstream, type ErrorShape, errorShapeOf, proxyError } from './upstream/call-upstream.js';
import { EARLY_MIN_BYTES, EarlyForward, PREFIX_BYTES, RewrittenSessions } from './upstream/early-forward.js';
import { forwardHeaders, upstreamUrl } from './upstream/forward-request.js';
import { type AnswerEnd, passBack } from './upstream/pass-back.js';
import type { UpstreamAnswer, UpstreamCall, UpstreamClient } from './upstream/upstream-client.js';

/** The status logged for a request whose client went away before its answer (nginx's 499). */
export const CLIENT_CLOSED_STATUS = 499;

/** A call's headers without `content-encoding` (its body sent uncompressed). */
function withoutEncoding(headers: Record<string, string>): Record<string, string> {
  const { 'content-encoding': _, ...rest } = headers;
  return rest;
}

/** Whether the client of `c` went away before its answer was sent whole. */
function clientClosed(c: Context): boolean {
  if (c.req.raw.signal.aborted) return true;
  const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
  const socket = env?.incoming?.socket;
  return socket?.destroyed === true && env?.outgoing?.writableFinished !== true;
}

/** The handler of one proxy app's compacted routes, with the state its requests share. */
export class ProxyHandler {
  readonly maxSize: number;
  private readonly manager: CompactManager;
  private readonly lastViews = new LastViews();
  private readonly known: KnownConversations;
  private readonly bodies: ParsedBodies;
  private readonly rewritten = new RewrittenSessions();
  private readonly forwardEarly: boolean;

  constructor(
    private readonly options: CompactionProxyOptions,
    private readonly upstream: URL,
    private readonly client: UpstreamClient,
  ) {
    this.manager = options.manager;
    this.maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.bodies = new ParsedBodies(options.reuseBytes ?? DEFAULT_REUSE_BYTES);
    this.known = new KnownConversations(options.reuseBytes ?? DEFAULT_REUSE_BYTES);
    this.forwardEarly = options.forwardEarly ?? true;
    // The log line's path is redacted with the default rules (`done`): compiled now in slices,
    // not in one piece of 23-31 ms on the first line when the manager redacts otherwise.
    warmDefaultRedactor().catch(() => {});
  }

  /** The 413 answer to a body over the limit. */
  tooLarge(shape: ErrorShape, decompressed = ''): Response {
    return proxyError(
      413,
      'request_too_large',
      `the request body ${decompressed}is over the proxy's limit of ${this.maxSize} bytes`,
      shape,
    );
  }

  /**
   * Writes the request's log line. Its path is the one sent, still percent-encoded: Hono's
   * `c.req.path` is decoded, and a `%0A` or `%1B` in it would forge a line or a terminal
   * escape in the log. It is redacted with the manager's own redactor (its `extraPatterns`, a
   * `custom` function), then with the default rules (also when the manager's redaction is
   * off or replaces them): a key in a path segment (`/v1/models/AIza.../...`) is not logged.
   */
  done(c: Context, entry: Partial<ProxyLogEntry>, status: number): void {
    const own = managerRedactorOf(this.manager);
    const sent = new URL(c.req.url).pathname;
    const path = getDefaultRedactor()(own ? own(sent) : sent);
    this.options.log?.({ method: c.req.method, path, status, ...entry });
  }

  /**
   * Runs `answer` (a request's handling up to its answer), and when it fails because the client
   * went away first (its body cut, or the connection closed while the proxy compacted or waited
   * for the upstream, whose call the request's signal aborted), writes the log line with status
   * 499 and `error: 'client_closed'` (nginx's convention) instead of letting the app answer
   * a 500 nobody reads, with no line.
   */
  async unlessClientClosed(
    c: Context,
    entry: Partial<ProxyLogEntry>,
    answer: () => Promise<Response>,
  ): Promise<Response> {
    try {
      return await answer();
    } catch (error) {
      if (!clientClosed(c)) throw error;
      this.done(c, { ...entry, error: 'client_closed' }, CLIENT_CLOSED_STATUS);
      return new Response(null, { status: CLIENT_CLOSED_STATUS });
    }
  }

  /**
   * Writes the line of an answer passed back, once it ended (see {@link AnswerEnd}): how long
   * the request took from `start` (the handler's), the usage the answer reported, and whether it
   * was cut.
   */
  ended(c: Context, entry: Partial<ProxyLogEntry>, status: number, start: number, end: AnswerEnd): void {
    entry.totalMs = end.at - start;
    if (end.usage !== undefined) entry.usage = end.usage;
    if (end.cut !== undefined) entry.error = end.cut;
    this.done(c, entry, status);
  }

  /** A compacted route's request, its log line written once the answer ended. */
  async compactedCall(c: Context, route: ProxyRoute): Promise<Response> {
    const entry: Partial<ProxyLogEntry> = {};
    return await this.unlessClientClosed(c, entry, () => this.compactedAnswer(c, route, entry));
  }

  private async compactedAnswer(c: Context, route: ProxyRoute, entry: Partial<ProxyLogEntry>) {
    const start = clock.now();
    const response = await this.prepareAndCall(c, route, entry);
    if (response instanceof Response) {
      this.done(c, entry, response.status);
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
          : { format: route.format, onUsage: (usage) => feedUsage(this.manager, session, usage) },
      onSent: (at) => {
        if (at !== undefined) entry.returnMs = at - answer.headAt;
      },
      onEnd: (end) => this.ended(c, entry, status, start, end),
    });
  }

  /** Reads, parses and compacts the request, and calls the upstream with it. */
  private async prepareAndCall(
    c: Context,
    route: ProxyRoute,
    entry: Partial<ProxyLogEntry>,
  ): Promise<Response | { answer: UpstreamAnswer; session: string | undefined; read: ReadBody }> {
    const mark = clock.now();
    // The route says the format: a Chat or Responses request that also carries
    // `anthropic-version` (a client's shared headers) keeps its OpenAI-compatible path.
    const url = upstreamUrl(
      this.upstream,
      route.path,
      new URL(c.req.url).search,
      route.format === 'anthropic',
    )!;
    const call = {
      url,
      method: 'POST',
      headers: forwardHeaders(c.req.raw.headers),
      signal: c.req.raw.signal,
    };
    let early: EarlyForward | undefined;
    try {
      const opened = this.forwardEarly
        ? this.earlyCall(c, route, call, (forward) => (early = forward))
        : undefined;
      const read = await readBody(c, this.maxSize, opened);
      if (read === undefined) return this.tooLarge(errorShapeOf(route.format, c.req.raw.headers));
      return await this.compactAndCall(c, route, entry, read, call, early, mark);
    } finally {
      // Released when the client's bytes went; anything else (compacted, refused, failed) drops it.
      (early as EarlyForward | undefined)?.cancel();
    }
  }

  /**
   * What forwards a body early as it is read (see early-forward.ts): opens the call once its
   * first bytes are in, unless its conversation's last request was rewritten.
   */
  private earlyCall(
    c: Context,
    route: ProxyRoute,
    call: Omit<UpstreamCall, 'body'>,
    opened: (forward: EarlyForward) => void,
  ): BodyProgress | undefined {
    let forward: EarlyForward | undefined;
    let decided = false;
    let named: string | undefined;
    // A body the proxy decodes is read whole first: its bytes as they come say nothing of its
    // conversation. One in a coding it cannot decode goes as sent, early like a plain one.
    const codings = contentCodings(c.req.header('content-encoding'));
    if (codings.length > 0 && (decodable(codings) || unsupportedCoding(codings) !== undefined))
      return undefined;
    try {
      named = headerSession(c.req.header(SESSION_HEADER));
    } catch {
      return undefined;
    }
    return (bytes, size) => {
      if (!decided) {
        if (bytes.length < EARLY_MIN_BYTES || bytes.length > this.maxSize) decided = true;
        else if (size < Math.min(PREFIX_BYTES, bytes.length)) return;
        if (decided) return;
        decided = true;
        if (!this.wasRewritten(route, named, bytes.subarray(0, Math.min(size, PREFIX_BYTES)))) {
          forward = new EarlyForward(this.client, call, bytes.length);
          opened(forward);
        }
      }
      forward?.advance(bytes, size);
    };
  }

  /** Whether the conversation of a body starting with `prefix` (or the session `named`) had its last request rewritten. */
  private wasRewritten(route: ProxyRoute, named: string | undefined, prefix: Buffer): boolean {
    if (named !== undefined) return this.rewritten.has(named);
    for (const session of this.rewritten.values())
      if (this.bodies.startsWith(session, route.path, prefix)) return true;
    return false;
  }

  /** Parses and compacts the request read, and calls the upstream with it. */
  private async compactAndCall(
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
    const shape = errorShapeOf(route.format, c.req.raw.headers);
    const codings = contentCodings(c.req.header('content-encoding'));
    const decoded =
      codings.length === 0 ? { bytes: read.bytes } : await decodeBody(read.bytes, codings, this.maxSize);
    if ('unknown' in decoded) {
      // A coding HTTP does not register (`x-...`): forwarded as sent, not compacted.
      entry.error = 'encoded_body';
      const answer = await callUpstream(this.client, { ...call, body: read.bytes }, shape, early);
      return answer instanceof Response ? answer : { answer, session: undefined, read };
    }
    if ('unsupported' in decoded) return unsupportedEncoding(decoded.unsupported, shape);
    if ('tooLarge' in decoded) return this.tooLarge(shape, 'decompressed ');
    if ('invalid' in decoded)
      return proxyError(
        400,
        'invalid_request_error',
        `the request body is not valid ${decoded.invalid}`,
        shape,
      );
    const bytes = decoded.bytes;
    const parsed = await this.bodies.parseInSlices(route, bytes);
    if (parsed === undefined)
      return proxyError(400, 'invalid_request_error', 'the request body is not a JSON object', shape);
    entry.parseMs = clock.now() - readAt;
    entry.reused = parsed.reused;
    const signal = call.signal;
    let compacted: Awaited<ReturnType<typeof compactRequest>>;
    try {
      compacted = await compactRequest(this.manager, route, parsed, {
        sessionHeader: c.req.header(SESSION_HEADER),
        signal,
        cacheBreakpoints: this.options.cacheBreakpoints ?? true,
        lastViews: this.lastViews,
        bodies: this.bodies,
        known: this.known,
      });
    } catch (error) {
      if (isCompactError(error, 'invalid_config'))
        return proxyError(400, 'invalid_request_error', error.message, shape);
      throw error;
    }
    Object.assign(entry, compacted.log, { prepareMs: clock.now() - readAt });
    const asSent = compacted.body === bytes;
    if (compacted.session !== undefined) this.rewritten.note(compacted.session, !asSent);
    // Unchanged, the client's own bytes go (compressed as sent); rewritten, the body goes uncompressed.
    const forward = asSent
      ? { ...call, body: read.bytes }
      : { ...call, headers: withoutEncoding(call.headers), body: compacted.body };
    const answer = await callUpstream(this.client, forward, shape, asSent ? early : undefined);
    return answer instanceof Response ? answer : { answer, session: compacted.session, read };
  }
}

/**
 * The 415 to a body in a coding this Node cannot decode (RFC 9110 15.5.16): named in the message
 * and `error.type` `unsupported_content_encoding`, the codings it can decode in `Accept-Encoding`.
 * Forwarded as sent it would go uncompacted with nothing said; nothing goes upstream.
 */
function unsupportedEncoding(coding: string, shape: ErrorShape): Response {
  const response = proxyError(
    415,
    'unsupported_content_encoding',
    `the proxy cannot decode Content-Encoding ${coding} on Node ${process.version} (zstd needs Node 22.15 or later, or the fzstd package installed beside agent-compaction); send the body uncompressed or as ${decodableCodings().join(', ')}`,
    shape,
  );
  response.headers.set('accept-encoding', decodableCodings().join(', '));
  return response;
}

/**
 * The upstream's answer handed back to the client as it arrives. Served by `@hono/node-server`
 * (the Node response at hand), the head is written at once (a stream's head flushed before its
 * first event) and the body piped socket to socket, chunk by chunk, with no web stream and no
 * timer in between; mounted elsewhere, it is a web `Response` over the same chunks. Either way
 * the usage is read on the side (not from an encoded body) and fed once the answer ended, never
 * when the client went away first.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { clock } from '../../core/clock.js';
import type { ReportedUsage } from '../../core/manager/manager-options.js';
import type { MessageFormat } from '../../core/messages/message.js';
import { responseHeaders } from './forward-request.js';
import { UsageReader, usageTap } from './usage-tap.js';

/** What to do besides passing the answer on. */
export interface PassBackOptions {
  /** Read the usage of the answer in this format (a 2xx one) and hand it to `onUsage`. */
  tap?: { format: MessageFormat; onUsage: (usage: Partial<ReportedUsage>) => void } | undefined;
  /** Headers the proxy adds (its session header). */
  extra: Record<string, string>;
  /**
   * Called once the answer's first byte went to the client (its head, flushed alone for a
   * stream, with the first body chunk otherwise), with `clock.now()` then; not on Node,
   * at once with `undefined` (the adapter writes the answer after the handler returned).
   */
  onSent?: (at: number | undefined) => void;
  /**
   * Called once the answer ended: its body all read from the upstream and handed on, or cut
   * (`client_closed`: the client went away first; `upstream_aborted`: the upstream failed
   * mid-answer), with `clock.now()` then and the usage read (when tapped). Not on Node, at once
   * after `onSent`.
   */
  onEnd?: (end: AnswerEnd) => void;
}

/** How an answer ended (see {@link PassBackOptions.onEnd}). */
export interface AnswerEnd {
  at: number;
  cut?: 'client_closed' | 'upstream_aborted';
  usage?: Partial<ReportedUsage>;
}

/**
 * `@hono/node-server`'s word for "the handler wrote the answer itself" (the header of its
 * `RESPONSE_ALREADY_SENT`), made here so the app needs the adapter only where it runs on it.
 */
const ALREADY_SENT = 'x-hono-already-sent';
/**
 * The platform's own `Response`: the adapter puts a light one of its own in the global (it
 * extends the platform's), and answers that one from a cache without looking at the marker.
 */
function platformResponse(): typeof Response {
  let type = globalThis.Response;
  for (let base = Object.getPrototypeOf(type); base !== Function.prototype && typeof base === 'function'; )
    [type, base] = [base, Object.getPrototypeOf(base)];
  return type;
}
const alreadySent = () => new (platformResponse())(null, { headers: { [ALREADY_SENT]: 'true' } });

/** The Node response of the request, when the app is served by `@hono/node-server`. */
function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
  return outgoing !== undefined && typeof outgoing.writeHead === 'function' ? outgoing : undefined;
}

const isEncoded = (upstream: IncomingMessage) => {
  const encoding = upstream.headers['content-encoding'];
  return encoding !== undefined && encoding !== 'identity';
};

/** Passes `upstream` on as the answer to `c`; returns what the handler returns. */
export function passBack(c: Context, upstream: IncomingMessage, options: PassBackOptions): Response {
  const streamed = (upstream.headers['content-type'] ?? '').includes('text/event-stream');
  const ok = (upstream.statusCode ?? 0) >= 200 && (upstream.statusCode ?? 0) < 300;
  const tap = options.tap && ok && !isEncoded(upstream) ? options.tap : undefined;
  const extra = Object.entries(options.extra).flat();
  // A HEAD's answer goes as a web `Response` on Node too: Hono answers HEAD by wrapping what
  // the handler returns in a new `Response`, which loses the adapter's "already sent" mark.
  const head = c.req.method === 'HEAD';
  const outgoing = head ? undefined : nodeResponse(c);
  if (outgoing === undefined) {
    const headers = new Headers();
    const flat = [...responseHeaders(upstream.rawHeaders, head), ...extra];
    for (let i = 0; i < flat.length; i += 2) headers.append(flat[i]!, flat[i + 1]!);
    const body = Readable.toWeb(upstream) as ReadableStream<Uint8Array>;
    const withTap = tap ? body.pipeThrough(usageTap(tap.format, streamed, tap.onUsage)) : body;
    const status = upstream.statusCode ?? 502;
    const empty = status === 204 || status === 304 || head;
    // No body to pass on: read the upstream's to its end, so that its connection is free again.
    if (empty) upstream.resume();
    options.onSent?.(undefined);
    options.onEnd?.({ at: clock.now() });
    return new Response(empty ? null : withTap, {
      status,
      statusText: upstream.statusMessage ?? '',
      headers,
    });
  }
  if (outgoing.destroyed) {
    // The client went away while the answer's head came: no one to pass it to.
    upstream.destroy();
    throw new Error('the client closed the connection before the answer');
  }
  outgoing.writeHead(upstream.statusCode ?? 502, upstream.statusMessage, [
    ...responseHeaders(upstream.rawHeaders),
    ...extra,
  ]);
  let sent = options.onSent;
  const first = () => {
    sent?.(clock.now());
    sent = undefined;
  };
  // A stream's head goes now, before its first event; a whole answer's goes with its body.
  if (streamed) {
    outgoing.flushHeaders();
    first();
  }
  const reader = tap === undefined ? undefined : { reader: new UsageReader(tap.format, streamed), ...tap };
  pipeBody(upstream, outgoing, reader, (end) => options.onEnd?.({ at: clock.now(), ...end }));
  if (!streamed) {
    // After the pipe's own listener: called once the first chunk was written (or no body came).
    upstream.once('data', first);
    outgoing.once('close', first);
  }
  return alreadySent();
}

/**
 * Pipes the answer's body to the client, the usage read on the side; `ended` once, when the
 * upstream's body ended (before its last chunk is written on: the client cannot have seen the
 * end first) or was cut.
 */
function pipeBody(
  upstream: IncomingMessage,
  outgoing: ServerResponse,
  tap: { reader: UsageReader; onUsage: (usage: Partial<ReportedUsage>) => void } | undefined,
  ended: (end: Omit<AnswerEnd, 'at'>) => void,
): void {
  let done = false;
  const end = (value: Omit<AnswerEnd, 'at'>) => {
    if (done) return;
    done = true;
    ended(value);
  };
  if (tap) upstream.on('data', (chunk: Buffer) => tap.reader.push(chunk));
  upstream.once('end', () => {
    if (outgoing.destroyed) return end({ cut: 'client_closed' });
    const usage = tap?.reader.end();
    if (tap !== undefined && usage !== undefined) tap.onUsage(usage);
    end(usage === undefined ? {} : { usage });
  });
  // The upstream failed mid-answer: the client's answer is cut too (never ended as if whole).
  const failed = () => {
    end({ cut: 'upstream_aborted' });
    outgoing.destroy();
  };
  upstream.once('error', failed);
  upstream.once('aborted', failed);
  // The client went away: stop reading the upstream's answer.
  outgoing.once('close', () => {
    end({ cut: 'client_closed' });
    if (!upstream.complete) upstream.destroy();
  });
  upstream.pipe(outgoing);
}

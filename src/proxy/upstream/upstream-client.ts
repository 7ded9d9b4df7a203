/**
 * The proxy's calls to its upstream, on `node:http(s)` through one keep-alive agent: the
 * connection to the provider is opened once and reused (no TCP or TLS handshake per request,
 * Nagle off), a body held in memory is written to the socket as it is (no copy into a web
 * stream), and the answer comes back as the socket's own chunks, to be piped to the client.
 *
 * A request that meets a kept connection reset under it (`ECONNRESET`, `EPIPE`: the upstream
 * closed it while idle, just as it was reused) is sent again once on a fresh one only when the
 * upstream cannot have acted on it (RFC 9112 9.3.1: a non-idempotent request is not retried
 * automatically unless it is known the first one was never applied):
 * - an idempotent method (GET, HEAD, OPTIONS, TRACE, PUT, DELETE: RFC 9110 9.2.2), whose body
 *   is in memory or none;
 * - any other (POST: a paid model call) only when its last byte had not been handed to the
 *   socket when the error came (the request's `finish` had not fired): the upstream never had
 *   a whole request, and no HTTP server answers or acts on a body it has not all read.
 * A POST that had all gone out is not sent again even though the reset came before any answer
 * (the upstream may have read it and be working on it): the client gets a 502
 * (`upstream_connection_reset`) and decides, as with undici (Node's `fetch`), which retries
 * only idempotent requests. Node's own `http` retries nothing; its docs' `reusedSocket`
 * example retries a GET.
 *
 * That race is made rare instead: a kept connection is closed after
 * {@link UPSTREAM_IDLE_MS} idle, or a second before the idle timeout the upstream announces
 * (`Keep-Alive: timeout=N`), which Node's agent applies only when it has a timeout of its own.
 */

import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { clock } from '../../core/clock.js';

/**
 * How long a kept connection to the upstream may stay idle (undici's default is 4 s, Node's
 * global agent's 5 s); shorter when the upstream announces a shorter idle timeout.
 */
export const UPSTREAM_IDLE_MS = 4_000;

/** Methods a request of which may be sent again (RFC 9110 9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** One call to the upstream. */
export interface UpstreamCall {
  url: URL;
  method: string;
  headers: Record<string, string>;
  /** The body: bytes in memory, a stream (a body the proxy does not read), or none. */
  body: Buffer | Readable | null;
  signal: AbortSignal;
}

/** The upstream's answer head, its body still to read. */
export interface UpstreamAnswer {
  response: IncomingMessage;
  /** `clock.now()` when the call was made. */
  startedAt: number;
  /** `clock.now()` when the request's first byte was handed to the socket. */
  writtenAt: number;
  /** `process.cpuUsage()` then. */
  writtenCpu: NodeJS.CpuUsage;
  /** `clock.now()` when the answer's head had arrived. */
  headAt: number;
}

/** Keep-alive connections to one upstream origin. */
export class UpstreamClient {
  readonly #agent: HttpAgent;
  readonly #request: typeof httpRequest;

  constructor(upstream: URL, idleMs = UPSTREAM_IDLE_MS) {
    const secure = upstream.protocol === 'https:';
    const options = { keepAlive: true, scheduling: 'lifo' as const, timeout: idleMs };
    this.#agent = secure ? new HttpsAgent(options) : new HttpAgent(options);
    this.#request = secure ? (httpsRequest as typeof httpRequest) : httpRequest;
  }

  /** Sends `call`; resolves with the answer's head, rejects when no answer came. */
  async send(call: UpstreamCall): Promise<UpstreamAnswer> {
    try {
      return await this.#once(call);
    } catch (error) {
      const { reusedSocket, unsent } = error as { reusedSocket?: boolean; unsent?: boolean };
      const replayable = call.body === null || Buffer.isBuffer(call.body);
      const safe = unsent === true || IDEMPOTENT_METHODS.has(call.method.toUpperCase());
      if (reusedSocket !== true || !replayable || !safe || call.signal.aborted) throw error;
      return await this.#once(call);
    }
  }

  /** Closes the idle connections. */
  close(): void {
    this.#agent.destroy();
  }

  /**
   * Opens a call whose body of `length` bytes is written as it comes (see early-forward.ts):
   * the request, its head sent, and its answer to come. Not sent again on a stale connection
   * (the caller holds the bytes and sends them with {@link send} instead, when the error is
   * marked `unsent`).
   */
  open(call: Omit<UpstreamCall, 'body'>, length: number): OpenedCall {
    const headers = { ...call.headers, 'content-length': String(length) };
    const request = this.#request(call.url, {
      method: call.method,
      headers,
      agent: this.#agent,
      signal: call.signal,
    });
    const startedAt = clock.now();
    const answer = new Promise<UpstreamAnswer>((resolve, reject) => {
      request.once('response', (response) => {
        resolve({
          response,
          startedAt,
          writtenAt: startedAt,
          writtenCpu: process.cpuUsage(),
          headAt: clock.now(),
        });
      });
      request.on('error', (error) => reject(staleMarked(request, error)));
    });
    // Settled by its reader, or dropped with the call: never an unhandled rejection.
    answer.catch(() => {});
    return { request, answer };
  }

  #once(call: UpstreamCall): Promise<UpstreamAnswer> {
    const startedAt = clock.now();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...call.headers };
      if (Buffer.isBuffer(call.body)) headers['content-length'] = String(call.body.length);
      const request = this.#request(call.url, {
        method: call.method,
        headers,
        agent: this.#agent,
        signal: call.signal,
      });
      let writtenAt = 0;
      let writtenCpu: NodeJS.CpuUsage = { user: 0, system: 0 };
      const written = () => {
        writtenAt = clock.now();
        writtenCpu = process.cpuUsage();
      };
      request.once('socket', (socket) => {
        if (socket.connecting) socket.once('connect', written);
        else written();
      });
      request.once('response', (response) => {
        resolve({ response, startedAt, writtenAt, writtenCpu, headAt: clock.now() });
      });
      request.on('error', (error) => reject(staleMarked(request, error)));
      const body = call.body;
      if (body === null) request.end();
      else if (Buffer.isBuffer(body)) request.end(body);
      else {
        body.once('error', (error) => request.destroy(error));
        body.pipe(request);
      }
    });
  }
}

/** A call opened by {@link UpstreamClient.open}: its body still to write. */
export interface OpenedCall {
  request: ClientRequest;
  /** Its answer (`writtenAt`, `writtenCpu` and `startedAt` are for its reader to set). */
  answer: Promise<UpstreamAnswer>;
}

/**
 * `error` marked `reusedSocket` when a kept connection was reset before any answer (the
 * upstream closed it while idle, or after reading the request), and `unsent` too when the
 * request's last byte had not been handed to the socket (`writableFinished`: its `finish`
 * had not fired), so that the upstream never had the whole request.
 */
function staleMarked(request: ClientRequest, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE'))
    Object.assign(error, { reusedSocket: true, unsent: !request.writableFinished });
  return error;
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ARIADNE_MAX_BODY_BYTES,
  type AriadneIssue,
  type StoredAriadneEvent,
  validateAriadneEvent,
} from './validate-ariadne-event.js';

export { type AriadneSubscription, subscribeAriadne } from './subscribe-ariadne.js';
export {
  ARIADNE_MAX_BODY_BYTES,
  type AriadneIssue,
  type StoredAriadneEvent,
  validateAriadneEvent,
} from './validate-ariadne-event.js';

/**
 * An Ariadne-compatible receiver for tests, on 127.0.0.1. It enforces the real server's
 * ingest rules (Ariadne's documented contract): `{batch:[...]}` or one event, nothing else;
 * trace and span events with their typed fields; ISO-8601 timestamps in UTC with `Z` only;
 * `ended_at >= started_at`; `status` ok or error; one bad event rejects the whole batch
 * (400 with `details[{path, message}]`); 413 above 262,144 bytes; unknown keys dropped;
 * strings in `data` over 100 KB truncated. `GET /events` streams what it stores as
 * Server-Sent Events (first frame `{"type":"connected"}`, filters `traceId` and `kinds`).
 */

/** One request the receiver saw. */
export interface AriadneRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
}

/** Options of {@link startAriadneTestServer}. */
export interface AriadneTestServerOptions {
  /**
   * Wait this long before answering `POST /ingest` (to test timeouts).
   * @default 0
   */
  delayMs?: number;
}

/** A running receiver. */
export interface AriadneTestServer {
  /** `http://127.0.0.1:{port}` */
  readonly baseUrl: string;
  /** `{baseUrl}/ingest` */
  readonly ingestUrl: string;
  /** Every event accepted, in order. */
  readonly events: StoredAriadneEvent[];
  /** Every request received, in order. */
  readonly requests: AriadneRequest[];
  /** Changes the answer delay of later requests. */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

interface Subscriber {
  response: ServerResponse;
  traceId: string | undefined;
  kinds: Set<string> | undefined;
}

function matches(subscriber: Subscriber, event: StoredAriadneEvent): boolean {
  if (subscriber.traceId !== undefined && event.trace_id !== subscriber.traceId) return false;
  if (subscriber.kinds !== undefined) {
    const kind = event.type === 'span' ? event.kind : 'trace';
    if (typeof kind !== 'string' || !subscriber.kinds.has(kind)) return false;
  }
  return true;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/**
 * Starts the receiver on 127.0.0.1 (a free port).
 *
 * @example
 * ```ts
 * const server = await startAriadneTestServer();
 * const exporter = ariadneExporter({ url: server.ingestUrl });
 * ```
 */
export async function startAriadneTestServer(
  options: AriadneTestServerOptions = {},
): Promise<AriadneTestServer> {
  const state: ReceiverState = {
    delayMs: options.delayMs ?? 0,
    events: [],
    requests: [],
    subscribers: new Set(),
    timers: new Set(),
  };
  const server: Server = createServer((request, response) => route(state, request, response));
  // Keep idle connections open: a client idle for seconds between calls (a compaction between
  // two model calls on a slow machine) must never reuse a socket the server is closing.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    ingestUrl: `${baseUrl}/ingest`,
    events: state.events,
    requests: state.requests,
    setDelay(ms: number) {
      state.delayMs = ms;
    },
    close() {
      for (const timer of state.timers) clearTimeout(timer);
      for (const subscriber of state.subscribers) subscriber.response.end();
      state.subscribers.clear();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the receiver holds, shared by its request handlers. */
interface ReceiverState {
  /** Read when each `POST /ingest` has its body (`setDelay` changes it). */
  delayMs: number;
  readonly events: StoredAriadneEvent[];
  readonly requests: AriadneRequest[];
  readonly subscribers: Set<Subscriber>;
  readonly timers: Set<ReturnType<typeof setTimeout>>;
}

/** Records the request and answers it: ingest, health, the event stream, or 404. */
function route(state: ReceiverState, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const record: AriadneRequest = {
    method: request.method ?? 'GET',
    path: url.pathname,
    headers: { ...request.headers },
    body: '',
    status: 0,
  };
  state.requests.push(record);
  if (request.method === 'POST' && url.pathname === '/ingest') {
    ingest(state, request, response, record).catch(() => {
      if (!response.headersSent) json(response, 500, { error: 'internal' });
    });
    return;
  }
  if (request.method === 'GET' && url.pathname === '/healthz') {
    record.status = 200;
    return json(response, 200, { status: 'ok' });
  }
  if (request.method === 'GET' && url.pathname === '/events') {
    record.status = 200;
    subscribe(url, request, response, state.subscribers);
    return;
  }
  record.status = 404;
  json(response, 404, { error: 'Not found' });
}

/** `POST /ingest`: validates the batch, stores what it accepts and streams it to subscribers. */
async function ingest(
  state: ReceiverState,
  request: IncomingMessage,
  response: ServerResponse,
  record: AriadneRequest,
) {
  const { body, tooLarge } = await readBody(request);
  record.body = body;
  if (state.delayMs > 0) await delay(state.delayMs, state.timers);
  if (response.destroyed) return;
  if (tooLarge) {
    record.status = 413;
    return json(response, 413, { error: 'Payload too large', limit: ARIADNE_MAX_BODY_BYTES });
  }
  const payload = readPayload(record.body);
  if ('error' in payload) {
    record.status = 400;
    return json(response, 400, payload);
  }
  const { accepted, details } = validateItems(payload.items, payload.prefix);
  if (details.length > 0) {
    record.status = 400;
    return json(response, 400, { error: 'Invalid event', details });
  }
  for (const event of accepted) {
    state.events.push(event);
    for (const subscriber of state.subscribers) {
      if (matches(subscriber, event)) subscriber.response.write(`data: ${JSON.stringify(event)}\n\n`);
    }
  }
  record.status = 200;
  json(response, 200, { success: true, count: accepted.length });
}

/** The request's body, or nothing past the ingest limit. */
async function readBody(request: IncomingMessage): Promise<{ body: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > ARIADNE_MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  }
  return { body: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge };
}

/** One event or `{ batch: [...] }`, or the 400 answer naming what is wrong. */
function readPayload(
  body: string,
): { items: unknown[]; prefix: string } | { error: string; details: AriadneIssue[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { error: 'Invalid JSON', details: [{ path: '', message: 'body is not JSON' }] };
  }
  const invalid = {
    error: 'Invalid payload',
    details: [{ path: '', message: 'expected one event or {"batch": [...]}' }],
  };
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return invalid;
  if ('batch' in parsed) {
    const batch = (parsed as { batch: unknown }).batch;
    if (!Array.isArray(batch))
      return { error: 'Invalid batch', details: [{ path: 'batch', message: 'expected an array' }] };
    return { items: batch, prefix: 'batch' };
  }
  return 'type' in parsed ? { items: [parsed], prefix: '' } : invalid;
}

/** Opens an SSE stream of the events that match `traceId` and `kinds`. */
function subscribe(
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
  subscribers: Set<Subscriber>,
): void {
  const kinds = url.searchParams.get('kinds');
  const subscriber: Subscriber = {
    response,
    traceId: url.searchParams.get('traceId') ?? undefined,
    kinds: kinds ? new Set(kinds.split(',').map((kind) => kind.trim())) : undefined,
  };
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.write(`data: ${JSON.stringify({ type: 'connected', timestamp: new Date().toISOString() })}\n\n`);
  subscribers.add(subscriber);
  request.on('close', () => subscribers.delete(subscriber));
}

/** Every item validated: the events accepted and the issues found, by path. */
function validateItems(items: unknown[], prefix: string) {
  const accepted: StoredAriadneEvent[] = [];
  const details: AriadneIssue[] = [];
  items.forEach((item, index) => {
    const result = validateAriadneEvent(item, prefix ? `${prefix}.${index}` : 'event');
    if (result.event) accepted.push(result.event);
    details.push(...result.issues);
  });
  return { accepted, details };
}

/** Waits `ms`, on a timer that closing the server clears. */
function delay(ms: number, timers: Set<ReturnType<typeof setTimeout>>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}

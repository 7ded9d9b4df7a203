import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An Ariadne-compatible receiver for tests, on 127.0.0.1. It enforces the real server's
 * ingest rules (Ariadne's documented contract): `{batch:[...]}` or one event, nothing else;
 * trace and span events with their typed fields; ISO-8601 timestamps in UTC with `Z` only;
 * `ended_at >= started_at`; `status` ok or error; one bad event rejects the whole batch
 * (400 with `details[{path, message}]`); 413 above 262,144 bytes; unknown keys dropped;
 * strings in `data` over 100 KB truncated. `GET /events` streams what it stores as
 * Server-Sent Events (first frame `{"type":"connected"}`, filters `traceId` and `kinds`).
 */

/** Ariadne's request body limit. */
export const ARIADNE_MAX_BODY_BYTES = 262_144;
const MAX_DATA_STRING = 100 * 1024;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** One validation problem, as Ariadne reports it. */
export interface AriadneIssue {
  path: string;
  message: string;
}

/** An event as the receiver stores it (unknown keys dropped). */
export type StoredAriadneEvent = Record<string, unknown> & { type: 'trace' | 'span'; trace_id: string };

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

const TRACE_KEYS: Record<string, 'string' | 'time' | 'metadata'> = {
  trace_id: 'string',
  name: 'string',
  group_id: 'string',
  started_at: 'time',
  ended_at: 'time',
  metadata: 'metadata',
};
const SPAN_KEYS: Record<string, 'string' | 'time' | 'data' | 'status'> = {
  trace_id: 'string',
  span_id: 'string',
  parent_id: 'string',
  kind: 'string',
  name: 'string',
  started_at: 'time',
  ended_at: 'time',
  data: 'data',
  status: 'status',
};

/** Validates one event; returns the stored form or the problems found. */
export function validateAriadneEvent(
  value: unknown,
  path: string,
): { event?: StoredAriadneEvent; issues: AriadneIssue[] } {
  const issues: AriadneIssue[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { issues: [{ path, message: 'expected an object' }] };
  }
  const input = value as Record<string, unknown>;
  const type = input.type;
  if (type !== 'trace' && type !== 'span') {
    return { issues: [{ path: `${path}.type`, message: "expected 'trace' or 'span'" }] };
  }
  const keys: Record<string, string> = type === 'trace' ? TRACE_KEYS : SPAN_KEYS;
  const out: Record<string, unknown> = { type };
  const required = type === 'trace' ? ['trace_id'] : ['trace_id', 'span_id'];
  for (const key of required) {
    if (typeof input[key] !== 'string' || input[key] === '') {
      issues.push({ path: `${path}.${key}`, message: 'required non-empty string' });
    }
  }
  for (const [key, kind] of Object.entries(keys)) {
    const item = input[key];
    if (item === undefined || item === null) continue;
    const at = `${path}.${key}`;
    switch (kind) {
      case 'string':
        if (typeof item !== 'string') issues.push({ path: at, message: 'expected a string' });
        else out[key] = item;
        break;
      case 'time':
        if (typeof item !== 'string' || !ISO_Z.test(item) || Number.isNaN(Date.parse(item))) {
          issues.push({ path: at, message: 'expected an ISO-8601 UTC timestamp ending in Z' });
        } else out[key] = item;
        break;
      case 'metadata':
        if (typeof item !== 'object' || Array.isArray(item)) {
          issues.push({ path: at, message: 'expected an object' });
        } else {
          for (const [metaKey, metaValue] of Object.entries(item as Record<string, unknown>)) {
            if (typeof metaValue !== 'string')
              issues.push({ path: `${at}.${metaKey}`, message: 'expected a string' });
          }
          out[key] = item;
        }
        break;
      case 'data':
        if (typeof item !== 'object' || Array.isArray(item))
          issues.push({ path: at, message: 'expected an object' });
        else out[key] = truncateStrings(item);
        break;
      case 'status':
        if (item !== 'ok' && item !== 'error') issues.push({ path: at, message: "expected 'ok' or 'error'" });
        else out[key] = item;
        break;
    }
  }
  if (typeof out.started_at === 'string' && typeof out.ended_at === 'string') {
    if (Date.parse(out.ended_at) < Date.parse(out.started_at)) {
      issues.push({ path: `${path}.ended_at`, message: 'ended_at must be >= started_at' });
    }
  }
  return issues.length > 0 ? { issues } : { event: out as StoredAriadneEvent, issues };
}

function truncateStrings(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_DATA_STRING ? value.slice(0, MAX_DATA_STRING) : value;
  if (Array.isArray(value)) return value.map(truncateStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, truncateStrings(item)]));
  }
  return value;
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
  let delayMs = options.delayMs ?? 0;
  const events: StoredAriadneEvent[] = [];
  const requests: AriadneRequest[] = [];
  const subscribers = new Set<Subscriber>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const ingest = async (request: IncomingMessage, response: ServerResponse, record: AriadneRequest) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > ARIADNE_MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    }
    record.body = tooLarge ? '' : Buffer.concat(chunks).toString('utf8');
    if (delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, delayMs);
        timers.add(timer);
      });
    }
    if (response.destroyed) return;
    if (tooLarge) {
      record.status = 413;
      return json(response, 413, { error: 'Payload too large', limit: ARIADNE_MAX_BODY_BYTES });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(record.body);
    } catch {
      record.status = 400;
      return json(response, 400, {
        error: 'Invalid JSON',
        details: [{ path: '', message: 'body is not JSON' }],
      });
    }
    let items: unknown[];
    let prefix: string;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'batch' in parsed) {
      const batch = (parsed as { batch: unknown }).batch;
      if (!Array.isArray(batch)) {
        record.status = 400;
        return json(response, 400, {
          error: 'Invalid batch',
          details: [{ path: 'batch', message: 'expected an array' }],
        });
      }
      items = batch;
      prefix = 'batch';
    } else if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'type' in parsed) {
      items = [parsed];
      prefix = '';
    } else {
      record.status = 400;
      return json(response, 400, {
        error: 'Invalid payload',
        details: [{ path: '', message: 'expected one event or {"batch": [...]}' }],
      });
    }
    const accepted: StoredAriadneEvent[] = [];
    const details: AriadneIssue[] = [];
    items.forEach((item, index) => {
      const result = validateAriadneEvent(item, prefix ? `${prefix}.${index}` : 'event');
      if (result.event) accepted.push(result.event);
      details.push(...result.issues);
    });
    if (details.length > 0) {
      record.status = 400;
      return json(response, 400, { error: 'Invalid event', details });
    }
    for (const event of accepted) {
      events.push(event);
      for (const subscriber of subscribers) {
        if (matches(subscriber, event)) subscriber.response.write(`data: ${JSON.stringify(event)}\n\n`);
      }
    }
    record.status = 200;
    json(response, 200, { success: true, count: accepted.length });
  };

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const record: AriadneRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: { ...request.headers },
      body: '',
      status: 0,
    };
    requests.push(record);
    if (request.method === 'POST' && url.pathname === '/ingest') {
      ingest(request, response, record).catch(() => {
        if (!response.headersSent) json(response, 500, { error: 'internal' });
      });
      return;
    }
    if (request.method === 'GET' && url.pathname === '/healthz') {
      record.status = 200;
      return json(response, 200, { status: 'ok' });
    }
    if (request.method === 'GET' && url.pathname === '/events') {
      const kinds = url.searchParams.get('kinds');
      const subscriber: Subscriber = {
        response,
        traceId: url.searchParams.get('traceId') ?? undefined,
        kinds: kinds ? new Set(kinds.split(',').map((kind) => kind.trim())) : undefined,
      };
      record.status = 200;
      response.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      response.write(
        `data: ${JSON.stringify({ type: 'connected', timestamp: new Date().toISOString() })}\n\n`,
      );
      subscribers.add(subscriber);
      request.on('close', () => subscribers.delete(subscriber));
      return;
    }
    record.status = 404;
    json(response, 404, { error: 'Not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    ingestUrl: `${baseUrl}/ingest`,
    events,
    requests,
    setDelay(ms: number) {
      delayMs = ms;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      for (const subscriber of subscribers) subscriber.response.end();
      subscribers.clear();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A live `GET /events` subscription. */
export interface AriadneSubscription {
  /** Every frame received after `connected`, parsed. */
  readonly events: StoredAriadneEvent[];
  /** Resolves when `predicate` holds for the frames received so far (rejects after `timeoutMs`). */
  waitFor(
    predicate: (events: StoredAriadneEvent[]) => boolean,
    timeoutMs?: number,
  ): Promise<StoredAriadneEvent[]>;
  close(): void;
}

/**
 * Subscribes to an Ariadne server's `/events` stream (the test receiver or a real Ariadne)
 * and resolves once the `connected` frame has arrived, so nothing ingested afterwards is missed.
 */
export async function subscribeAriadne(
  baseUrl: string,
  filters: { traceId?: string; kinds?: string[] } = {},
): Promise<AriadneSubscription> {
  const url = new URL('/events', baseUrl);
  if (filters.traceId) url.searchParams.set('traceId', filters.traceId);
  if (filters.kinds) url.searchParams.set('kinds', filters.kinds.join(','));
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
  if (!response.ok || !response.body) throw new Error(`GET ${url} answered ${response.status}`);
  const events: StoredAriadneEvent[] = [];
  const listeners = new Set<() => void>();
  let connected!: () => void;
  const ready = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const decoder = new TextDecoder();
  void (async () => {
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (data) {
            const parsed = JSON.parse(data) as StoredAriadneEvent | { type: 'connected' };
            if (parsed.type === 'connected') connected();
            else events.push(parsed as StoredAriadneEvent);
            for (const listener of listeners) listener();
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  await ready;
  return {
    events,
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(events);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no matching events over SSE within ${timeoutMs} ms (got ${events.length})`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    close() {
      controller.abort();
    },
  };
}

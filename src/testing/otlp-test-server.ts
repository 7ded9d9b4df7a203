import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP attribute value as JSON carries it. */
type OtlpAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
};

/** A span as received, flattened: attributes as plain values, times as epoch milliseconds. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number | undefined;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string } | undefined;
  events: { name: string; attributes: Record<string, unknown> }[];
  scope: string | undefined;
  resource: Record<string, unknown>;
}

/** One POST the receiver accepted. */
export interface OtlpRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A running OTLP/HTTP JSON receiver. */
export interface OtlpTestServer {
  /** `http://127.0.0.1:{port}` */
  readonly baseUrl: string;
  /** `{baseUrl}/v1/traces` */
  readonly tracesUrl: string;
  readonly spans: ReceivedSpan[];
  readonly requests: OtlpRequest[];
  close(): Promise<void>;
}

function value(input: OtlpAnyValue | undefined): unknown {
  if (!input) return undefined;
  if (input.stringValue !== undefined) return input.stringValue;
  if (input.boolValue !== undefined) return input.boolValue;
  if (input.intValue !== undefined) return Number(input.intValue);
  if (input.doubleValue !== undefined) return input.doubleValue;
  if (input.arrayValue) return (input.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: { key: string; value?: OtlpAnyValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, value(entry.value)]));
}

function nanosToMs(nanos: unknown): number {
  if (typeof nanos === 'string') return Number(BigInt(nanos) / 1_000_000n);
  if (typeof nanos === 'number') return Math.floor(nanos / 1e6);
  if (nanos && typeof nanos === 'object' && 'high' in nanos && 'low' in nanos) {
    const { high, low } = nanos as { high: number; low: number };
    return Number(((BigInt(high) << 32n) + BigInt(low >>> 0)) / 1_000_000n);
  }
  return Number.NaN;
}

/**
 * A receiver of OTLP/HTTP traces in JSON (what `OTLPTraceExporter` from
 * `@opentelemetry/exporter-trace-otlp-http` and Langfuse's span processor send), on
 * 127.0.0.1. Accepts any path (`/v1/traces`, `/api/public/otel/v1/traces`), answers 415 to
 * anything but JSON, and keeps the flattened spans.
 *
 * @example
 * ```ts
 * const receiver = await startOtlpTestServer();
 * const exporter = new OTLPTraceExporter({ url: receiver.tracesUrl });
 * ```
 */
export async function startOtlpTestServer(): Promise<OtlpTestServer> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpRequest[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString('utf8');
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    if (!String(request.headers['content-type'] ?? '').includes('application/json')) {
      response.writeHead(415, { 'content-type': 'application/json' }).end('{"error":"JSON only"}');
      return;
    }
    requests.push({ path: request.url ?? '/', headers: request.headers, body });
    try {
      const parsed = JSON.parse(body) as {
        resourceSpans?: {
          resource?: { attributes?: { key: string; value?: OtlpAnyValue }[] };
          scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const resourceSpan of parsed.resourceSpans ?? []) {
        const resource = attributes(resourceSpan.resource?.attributes);
        for (const scopeSpan of resourceSpan.scopeSpans ?? []) {
          for (const span of scopeSpan.spans ?? []) {
            spans.push({
              traceId: String(span.traceId),
              spanId: String(span.spanId),
              parentSpanId: span.parentSpanId ? String(span.parentSpanId) : undefined,
              name: String(span.name),
              kind: typeof span.kind === 'number' ? span.kind : undefined,
              startMs: nanosToMs(span.startTimeUnixNano),
              endMs: nanosToMs(span.endTimeUnixNano),
              attributes: attributes(span.attributes as { key: string; value?: OtlpAnyValue }[]),
              status: span.status as ReceivedSpan['status'],
              events: (
                (span.events as { name: string; attributes?: { key: string; value?: OtlpAnyValue }[] }[]) ??
                []
              ).map((event) => ({ name: event.name, attributes: attributes(event.attributes) })),
              scope: scopeSpan.scope?.name,
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } catch {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad JSON"}');
    }
  });
  // Keep idle connections open: a client idle for seconds between calls (a compaction between
  // two model calls on a slow machine) must never reuse a socket the server is closing.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    tracesUrl: `${baseUrl}/v1/traces`,
    spans,
    requests,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

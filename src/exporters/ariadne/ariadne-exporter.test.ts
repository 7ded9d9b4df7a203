import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { createRedactor } from '../../core/redaction/redactor.js';
import {
  ARIADNE_MAX_BODY_BYTES,
  type AriadneTestServer,
  type StoredAriadneEvent,
  startAriadneTestServer,
  subscribeAriadne,
} from '../../testing/ariadne-test-server.js';
import { describeExporterConformance } from '../../testing/exporter-conformance.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { ariadneExporter, splitAriadneBatches, toAriadneSpan } from './ariadne-exporter.js';

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/ingest`;
}

function captureLog() {
  const lines: string[] = [];
  return { lines, log: (line: string) => void lines.push(line) };
}

describeExporterConformance({
  name: 'ariadne',
  async create() {
    const server = await startAriadneTestServer();
    return {
      exporter: ariadneExporter({ url: server.ingestUrl, timeoutMs: 30_000, log: () => {} }),
      received: () =>
        server.requests
          .filter((request) => request.status === 200)
          .map((request) => request.body)
          .join('\n'),
      close: () => server.close(),
    };
  },
  async createFailing() {
    return {
      exporter: ariadneExporter({ url: await closedPortUrl(), log: () => {} }),
      close: async () => {},
    };
  },
});

/**
 * Subscribes to `/events`, exports a compaction's events and checks what arrives over SSE.
 * Runs against the test receiver, and against a real Ariadne when ARIADNE_URL is set.
 */
async function exportAndWatch(baseUrl: string) {
  const traceId = `trace-${crypto.randomUUID()}`;
  const sessionId = `session-${crypto.randomUUID().slice(0, 8)}`;
  const summary = 'Goal: migrate the billing service. Done: schema v2. Next: backfill. api_key=<REDACTED>';
  const events = sampleCompactionEvents({
    traceId,
    sessionId,
    parentId: 'caller-span-01',
    summary,
    withError: true,
  });
  const subscription = await subscribeAriadne(baseUrl, { traceId });
  try {
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: new URL('/ingest', baseUrl).toString(), log });
    await exporter.export(events);
    const spans = (all: StoredAriadneEvent[]) => all.filter((event) => event.type === 'span');
    const arrived = await subscription.waitFor((all) => spans(all).length >= events.length);
    expect(lines).toEqual([]);
    return { events, arrived, spans: spans(arrived), traceId, sessionId, summary };
  } finally {
    subscription.close();
  }
}

function checkArrived(result: Awaited<ReturnType<typeof exportAndWatch>>) {
  const { events, arrived, spans, traceId, sessionId, summary } = result;
  const trace = arrived.find((event) => event.type === 'trace');
  expect(trace).toMatchObject({
    trace_id: traceId,
    metadata: { session_id: sessionId, agent_name: 'agent-compaction' },
  });
  for (const event of events) {
    const span = spans.find((candidate) => candidate.span_id === event.spanId);
    expect(span, event.name).toBeDefined();
    expect(span).toMatchObject({
      trace_id: traceId,
      parent_id: 'caller-span-01',
      kind: 'compaction',
      name: event.name,
    });
    const started = Date.parse(span?.started_at as string);
    const ended = Date.parse(span?.ended_at as string);
    expect(started).toBe(event.startTime);
    expect(ended - started).toBe(event.endTime - event.startTime);
    expect((span?.data as Record<string, unknown> | undefined)?.duration_ms).toBe(
      event.endTime - event.startTime,
    );
  }
  const byName = (name: string) => spans.find((span) => span.name === name)?.data as Record<string, unknown>;
  expect(byName('compact.token_estimate')).toMatchObject({
    t_est: 112_345,
    max_tokens: 128_000,
    usage_pct: 0.8777,
  });
  expect(byName('compact.trigger_decision')).toMatchObject({
    triggered: true,
    pruned_count: 47,
    kept: { pinned: 3, recent_turns: 6, tool_pairs: 4 },
    policy: { trigger_pct: 0.85, strategy: 'task_state' },
  });
  expect(byName('compact.summary_created')).toMatchObject({
    summary_tokens: 480,
    compression_ratio: 127.08,
    output_text: summary,
    latency_ms: 1240,
  });
  expect(byName('compact.summary_created').summary).toBeUndefined();
  expect(byName('compact.pruned_messages')).toMatchObject({ tokens_before: 112_345, tokens_after: 14_210 });
  expect(spans.find((span) => span.name === 'compact.error')).toMatchObject({
    status: 'error',
    data: { error_type: 'summarizer_timeout', fallback: 'embedded' },
  });
  const summarySpan = spans.find((span) => span.name === 'compact.summary_created');
  expect(Date.parse(summarySpan?.ended_at as string) - Date.parse(summarySpan?.started_at as string)).toBe(
    1240,
  );
}

describe('ariadneExporter against the Ariadne test receiver', () => {
  let server: AriadneTestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('streams the spans of a compaction over SSE with parent links, durations, figures and summary', async () => {
    server = await startAriadneTestServer();
    const result = await exportAndWatch(server.baseUrl);
    checkArrived(result);
    const ingest = server.requests.filter((request) => request.path === '/ingest');
    expect(ingest.every((request) => request.status === 200)).toBe(true);
    const body = JSON.parse(ingest[0]?.body ?? '{}') as { batch: Record<string, unknown>[] };
    expect(Array.isArray(body.batch)).toBe(true);
    for (const event of body.batch) {
      for (const key of ['timestamp', 'duration_ms', 'properties', 'payload'])
        expect(event).not.toHaveProperty(key);
    }
  });

  it('splits batches under 256 KB so the receiver never answers 413', async () => {
    server = await startAriadneTestServer();
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: server.ingestUrl, timeoutMs: 30_000, log });
    const events: AnyCompactEvent[] = [];
    for (let index = 0; index < 12; index++) {
      events.push(
        ...sampleCompactionEvents({
          traceId: 'big-trace',
          summary: `${index} ${'lorem ipsum '.repeat(5000)}`,
        }),
      );
    }
    await exporter.export(events);
    const ingest = server.requests.filter((request) => request.path === '/ingest');
    expect(ingest.length).toBeGreaterThan(1);
    for (const request of ingest) {
      expect(request.status).toBe(200);
      expect(Buffer.byteLength(request.body)).toBeLessThanOrEqual(ARIADNE_MAX_BODY_BYTES);
    }
    expect(server.events.filter((event) => event.type === 'span')).toHaveLength(events.length);
    expect(server.events.filter((event) => event.type === 'trace')).toHaveLength(1);
    expect(lines).toEqual([]);
  });

  it('shortens a single event that is too big on its own', async () => {
    server = await startAriadneTestServer();
    const exporter = ariadneExporter({ url: server.ingestUrl, timeoutMs: 30_000, log: () => {} });
    const [, , summary] = sampleCompactionEvents({ summary: 'z'.repeat(400_000) });
    await exporter.export([summary as AnyCompactEvent]);
    const span = server.events.find((event) => event.type === 'span');
    expect(span?.data).toMatchObject({ truncated: true });
    const body = server.requests[0]?.body ?? '';
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(256_000);
    expect(body).toContain('… [truncated]');
    // The receiver, like Ariadne, keeps at most 100 KB of any string in data.
    expect(String((span?.data as Record<string, unknown> | undefined)?.output_text)).toHaveLength(100 * 1024);
  });

  it('reports a rejected batch on stderr with the [Ariadne] prefix and the details', async () => {
    server = await startAriadneTestServer();
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: server.ingestUrl, timeoutMs: 30_000, log, traceEvents: false });
    const [event] = sampleCompactionEvents();
    await exporter.export([{ ...event, traceId: '' } as AnyCompactEvent]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[Ariadne\] POST .* answered 400 .*trace_id/);
  });

  it('writes [Ariadne] to stderr by default and never throws when the port is closed', async () => {
    const url = await closedPortUrl();
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      await expect(ariadneExporter({ url }).export(sampleCompactionEvents())).resolves.toBeUndefined();
    } finally {
      process.stderr.write = original;
    }
    expect(written.join('')).toMatch(
      /^\[Ariadne\] POST http:\/\/127\.0\.0\.1:\d+\/ingest failed for 7 events: .*ECONNREFUSED/,
    );
  });

  it('gives up on a receiver slower than 2 s after one retry, in bounded time', async () => {
    server = await startAriadneTestServer({ delayMs: 2600 });
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: server.ingestUrl, log });
    await expect(exporter.export(sampleCompactionEvents())).resolves.toBeUndefined();
    // Two attempts that each time out, and nothing more (no wall-clock assertion: the
    // attempts and the exporter's own report are what bound it).
    expect(server.requests.filter((request) => request.path === '/ingest')).toHaveLength(2);
    expect(lines).toEqual([
      expect.stringMatching(/^\[Ariadne\] POST .* timed out after 2000 ms \(retried once\)/),
    ]);
  });

  it('stops after a network failure instead of trying every remaining batch', async () => {
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: await closedPortUrl(), log, maxBodyBytes: 4000 });
    const events = [...sampleCompactionEvents(), ...sampleCompactionEvents(), ...sampleCompactionEvents()];
    await exporter.export(events);
    // One POST, then the rest is kept for later instead of being tried batch after batch.
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[Ariadne\] POST .* failed for \d+ events/);
    expect(lines[1]).toMatch(/^\[Ariadne\] keeping 18 undelivered event\(s\)/);
  });

  it('redacts with its own redactor when given one', async () => {
    server = await startAriadneTestServer();
    const exporter = ariadneExporter({
      url: server.ingestUrl,
      timeoutMs: 30_000,
      redact: createRedactor(),
      log: () => {},
    });
    await exporter.export(
      sampleCompactionEvents({ summary: 'deploy with api_key=sk-abc123 and password: hunter2' }),
    );
    const body = server.requests.map((request) => request.body).join('');
    expect(body).toContain('api_key=<REDACTED>');
    expect(body).not.toContain('sk-abc123');
    expect(body).not.toContain('hunter2');
  });
});

describe('the Ariadne test receiver enforces the real rules', () => {
  let server: AriadneTestServer;
  const post = async (body: unknown) => {
    const response = await fetch(server.ingestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const span = { type: 'span', trace_id: 't1', span_id: 's1', started_at: '2025-10-19T12:34:56.000Z' };

  afterEach(() => server.close());

  it('rejects the whole batch for one bad event, with details', async () => {
    server = await startAriadneTestServer();
    const result = await post({ batch: [span, { ...span, span_id: 's2', status: 'skipped' }] });
    expect(result.status).toBe(400);
    expect(result.body.details).toEqual([{ path: 'batch.1.status', message: "expected 'ok' or 'error'" }]);
    expect(server.events).toEqual([]);
  });

  it('accepts only Z timestamps, ended_at >= started_at, and {batch} or one event', async () => {
    server = await startAriadneTestServer();
    expect((await post({ ...span, started_at: '2025-10-19T14:34:56+02:00' })).status).toBe(400);
    expect((await post({ ...span, ended_at: '2025-10-19T12:34:55.000Z' })).status).toBe(400);
    expect((await post([span])).status).toBe(400);
    expect((await post({ events: [span] })).status).toBe(400);
    expect((await post({ type: 'trace', trace_id: 't1', metadata: { n: 1 } })).status).toBe(400);
    expect((await post('not json')).status).toBe(400);
    expect(await post(span)).toEqual({ status: 200, body: { success: true, count: 1 } });
  });

  it('answers 413 above 262,144 bytes and drops unknown keys', async () => {
    server = await startAriadneTestServer();
    const big = { batch: [{ ...span, data: { text: 'x'.repeat(ARIADNE_MAX_BODY_BYTES) } }] };
    expect((await post(big)).status).toBe(413);
    await post({ ...span, timestamp: 'x', duration_ms: 4, properties: { a: 1 }, payload: '{}' });
    expect(server.events).toEqual([
      { type: 'span', trace_id: 't1', span_id: 's1', started_at: span.started_at },
    ]);
  });

  it('filters the SSE stream by traceId and kinds', async () => {
    server = await startAriadneTestServer();
    const byKind = await subscribeAriadne(server.baseUrl, { kinds: ['llm'] });
    const byTrace = await subscribeAriadne(server.baseUrl, { traceId: 't2' });
    await post({
      batch: [
        { ...span, kind: 'compaction' },
        { ...span, trace_id: 't2', span_id: 's9', kind: 'llm' },
      ],
    });
    await byKind.waitFor((events) => events.length === 1);
    await byTrace.waitFor((events) => events.length === 1);
    expect(byKind.events[0]?.span_id).toBe('s9');
    expect(byTrace.events[0]?.span_id).toBe('s9');
    byKind.close();
    byTrace.close();
  });
});

const liveUrl = process.env.ARIADNE_URL;
describe('ariadneExporter against a real Ariadne (ARIADNE_URL)', () => {
  it.skipIf(!liveUrl)(
    'streams the spans of a compaction over SSE (skipped: set ARIADNE_URL to run)',
    async () => {
      const base = new URL(liveUrl as string);
      const result = await exportAndWatch(`${base.protocol}//${base.host}`);
      checkArrived(result);
    },
  );
});

describe('toAriadneSpan and splitAriadneBatches', () => {
  it('clamps ended_at to started_at and keeps status ok|error', () => {
    const [event] = sampleCompactionEvents();
    const span = toAriadneSpan({ ...event, endTime: (event?.startTime ?? 0) - 50, status: 'weird' } as never);
    expect(span.ended_at).toBe(span.started_at);
    expect(span.status).toBe('ok');
    expect(span.started_at).toMatch(/Z$/);
  });

  it('keeps every body within the limit', () => {
    const spans = sampleCompactionEvents().map((event) => toAriadneSpan(event));
    const bodies = splitAriadneBatches([...spans, ...spans, ...spans], 2000);
    expect(bodies.length).toBeGreaterThan(3);
    for (const body of bodies) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(2000);
    expect(bodies.flatMap((body) => (JSON.parse(body) as { batch: unknown[] }).batch)).toHaveLength(
      spans.length * 3,
    );
  });
});

describe('ariadne exporter log lines', () => {
  it("carry no secret of the URL's query nor of a rejection that echoes one", async () => {
    const password = `pw${'Zq7Xv2Lm9Rt4'.repeat(2)}`;
    const token = `ghp_${'Ab3dEf6hIj9kLm2nOp5q'.repeat(2)}`.slice(0, 40);
    // A receiver that refuses the key it was given and quotes it back, as some do.
    const server = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(401, { 'content-type': 'text/plain' });
        response.end(`invalid credentials for ${request.url}: password=${password}; ${'detail '.repeat(80)}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const { lines, log } = captureLog();
      const exporter = ariadneExporter({
        url: `http://127.0.0.1:${port}/ingest?api_key=${token}`,
        timeoutMs: 30_000,
        log,
      });
      await exporter.export(sampleCompactionEvents());
      await exporter.forceFlush?.();
      // The test can fail: the rejection was logged.
      expect(lines.some((line) => line.includes('401'))).toBe(true);
      const logged = lines.join('\n');
      expect(logged.includes(password)).toBe(false);
      expect(logged.includes(token.slice(4, 16))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AriadneTestServer, startAriadneTestServer } from '../../testing/ariadne-test-server.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { ariadneExporter } from './ariadne-exporter.js';

function captureLog() {
  const lines: string[] = [];
  return { lines, log: (line: string) => void lines.push(line) };
}

/**
 * A TCP front for the receiver that resets every connection while `down` (an outage: the
 * agent started before Ariadne, or Ariadne restarted), then forwards bytes unchanged.
 */
async function outageFront(target: AriadneTestServer) {
  const upstream = new URL(target.baseUrl);
  const state = { down: true, refused: 0 };
  const sockets = new Set<Socket>();
  const front = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (state.down) {
      state.refused++;
      socket.resetAndDestroy();
      return;
    }
    const back = connect(Number(upstream.port), upstream.hostname);
    back.on('error', () => socket.destroy());
    socket.pipe(back).pipe(socket);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as { port: number };
  return {
    state,
    url: `http://127.0.0.1:${port}/ingest`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

describe('ariadneExporter during and after an outage', () => {
  let server: AriadneTestServer | undefined;
  let front: Awaited<ReturnType<typeof outageFront>> | undefined;
  afterEach(async () => {
    await front?.close();
    await server?.close();
    front = undefined;
    server = undefined;
  });

  it('sends the trace event once the receiver is back, followed by every span', async () => {
    server = await startAriadneTestServer();
    front = await outageFront(server);
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: front.url, log, agentName: 'support-bot' });
    const traceId = 'a'.repeat(32);
    const first = sampleCompactionEvents({ sessionId: 'session-outage', traceId });
    await exporter.export(first);
    expect(front.state.refused).toBeGreaterThan(0);
    expect(server.events).toEqual([]);
    expect(lines[0]).toMatch(/^\[Ariadne\] POST .* failed for 7 events/);

    front.state.down = false;
    const second = sampleCompactionEvents({ sessionId: 'session-outage', traceId });
    await exporter.export(second);

    const received = server.events;
    expect(received[0]).toMatchObject({
      type: 'trace',
      trace_id: traceId,
      metadata: { agent_name: 'support-bot', session_id: 'session-outage' },
    });
    expect(received.filter((event) => event.type === 'trace')).toHaveLength(1);
    expect(received.slice(1).map((event) => event.span_id)).toEqual(
      [...first, ...second].map((event) => event.spanId),
    );
  });

  it('a trace stays unsent while its POST fails, and forceFlush delivers what was kept', async () => {
    server = await startAriadneTestServer();
    front = await outageFront(server);
    const exporter = ariadneExporter({ url: front.url, log: () => {} });
    const events = sampleCompactionEvents({ traceId: 'b'.repeat(32) });
    await exporter.export(events.slice(0, 2));
    await exporter.export(events.slice(2, 4));
    expect(server.events).toEqual([]);
    front.state.down = false;
    await exporter.forceFlush?.();
    expect(server.events.map((event) => event.type)).toEqual(['trace', 'span', 'span', 'span', 'span']);
    expect(server.events.slice(1).map((event) => event.span_id)).toEqual(
      events.slice(0, 4).map((event) => event.spanId),
    );
    await exporter.export(events.slice(4));
    // Sent once: later batches carry no second trace event.
    expect(server.events.filter((event) => event.type === 'trace')).toHaveLength(1);
    expect(server.events).toHaveLength(1 + events.length);
  });

  it('shutdown makes one attempt for kept events against a slow receiver (no retry)', async () => {
    server = await startAriadneTestServer();
    front = await outageFront(server);
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: front.url, log, timeoutMs: 300 });
    await exporter.export(sampleCompactionEvents());
    front.state.down = false;
    server.setDelay(2000);
    await exporter.shutdown?.();
    expect(server.requests.filter((request) => request.path === '/ingest')).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/timed out after 300 ms$/);
    await exporter.shutdown?.();
    expect(server.requests.filter((request) => request.path === '/ingest')).toHaveLength(1);
  });

  it('keeps at most maxPendingEvents, dropping the oldest', async () => {
    server = await startAriadneTestServer();
    front = await outageFront(server);
    const { lines, log } = captureLog();
    const exporter = ariadneExporter({ url: front.url, log, maxPendingEvents: 4 });
    const events = sampleCompactionEvents();
    await exporter.export(events);
    expect(lines.at(-1)).toBe('[Ariadne] dropped 2 undelivered event(s) (more than maxPendingEvents = 4)');
    front.state.down = false;
    await exporter.forceFlush?.();
    expect(server.events.slice(1).map((event) => event.span_id)).toEqual(
      events.slice(2).map((event) => event.spanId),
    );
  });
});

describe('ariadneExporter, a hostile receiver', () => {
  it("makes the terminal controls of a receiver's answer visible in its log line", async () => {
    // A receiver (or whatever answers at the URL) quoting escape sequences back.
    const hostile = createHttpServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'text/plain' });
      response.end('bad \u001b]0;pwned\u0007\u001b[2J\u202e batch');
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const { port } = hostile.address() as { port: number };
    try {
      const { lines, log } = captureLog();
      const exporter = ariadneExporter({ url: `http://127.0.0.1:${port}/ingest`, log, traceEvents: false });
      await exporter.export(sampleCompactionEvents());
      expect(lines.join('\n')).toContain('answered 400');
      expect(lines.join('\n')).toContain('\\u{1b}]0;pwned');
      expect(lines.join('\n')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });
});

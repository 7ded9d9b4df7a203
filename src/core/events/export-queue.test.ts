import { describe, expect, it } from 'vitest';
import { until } from '../../../test/support/until.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import type { AnyCompactEvent, EventExporter } from './events.js';
import { ExportQueue } from './export-queue.js';

function recorder(name = 'recorder') {
  const batches: AnyCompactEvent[][] = [];
  const exporter: EventExporter = {
    name,
    async export(events) {
      batches.push([...events]);
    },
  };
  return { exporter, batches, all: () => batches.flat() };
}

/** An exporter that never answers until released. */
function hanging() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const received: AnyCompactEvent[] = [];
  const exporter: EventExporter = {
    name: 'hanging',
    async export(events) {
      received.push(...events);
      await gate;
    },
  };
  return { exporter, received, release };
}

const events = (count: number) =>
  Array.from(
    { length: count },
    (_, index) => ({ ...sampleCompactionEvents()[0], spanId: `s${index}` }) as AnyCompactEvent,
  );

describe('ExportQueue', () => {
  it('enqueue returns at once while the exporter hangs, and flush waits for it', async () => {
    const slow = hanging();
    const queue = new ExportQueue([slow.exporter], { flushIntervalMs: 1 });
    for (const event of events(5)) queue.enqueue(event);
    let flushed = false;
    const flush = queue.flush().then(() => {
      flushed = true;
    });
    await until(() => slow.received.length === 5, 'the exporter to receive the first 5 events');
    // enqueue is synchronous: it cannot wait on the hung exporter.
    queue.enqueue(events(1)[0]!);
    expect(slow.received).toHaveLength(5);
    expect(flushed).toBe(false);
    slow.release();
    await flush;
    expect(flushed).toBe(true);
    await queue.flush();
    expect(slow.received).toHaveLength(6);
  });

  it('drops the oldest when full and counts them, instead of growing behind a hung exporter', async () => {
    const slow = hanging();
    const queue = new ExportQueue([slow.exporter], { maxSize: 10, maxBatchSize: 4, flushIntervalMs: 1 });
    const all = events(4);
    for (const event of all) queue.enqueue(event);
    void queue.flush(); // the worker takes these 4 and hangs
    const more = events(30).map((event, index) => ({ ...event, spanId: `m${index}` }) as AnyCompactEvent);
    for (const event of more) queue.enqueue(event);
    expect(queue.size).toBe(10);
    expect(queue.dropped).toBe(20);
    slow.release();
    await queue.flush();
    expect(slow.received.map((event) => event.spanId)).toEqual([
      ...all.map((event) => event.spanId),
      ...more.slice(20).map((event) => event.spanId),
    ]);
  });

  it('sends in batches of maxBatchSize, in order, to every exporter', async () => {
    const first = recorder('a');
    const second = recorder('b');
    const queue = new ExportQueue([first.exporter, second.exporter], { maxBatchSize: 3 });
    for (const event of events(7)) queue.enqueue(event);
    await queue.flush();
    expect(first.batches.map((batch) => batch.length)).toEqual([3, 3, 1]);
    expect(second.all().map((event) => event.spanId)).toEqual(events(7).map((event) => event.spanId));
  });

  it('a hung exporter holds up only itself: the others get the next batches before it times out', async () => {
    const stuck = hanging();
    const healthy = recorder('healthy');
    const errors: string[] = [];
    const queue = new ExportQueue([stuck.exporter, healthy.exporter], {
      maxBatchSize: 2,
      exportTimeoutMs: 20_000,
      onExporterError: (name) => errors.push(name),
    });
    const all = events(6);
    for (const event of all) queue.enqueue(event);
    const flushed = queue.flush();
    await until(() => healthy.all().length === 6, 'the healthy exporter to receive all three batches');
    // On the old queue every batch waited for both exporters: the healthy one got its second
    // batch only after the hung one timed out (and was reported).
    expect(errors).toEqual([]);
    expect(stuck.received).toHaveLength(2);
    expect(healthy.all().map((event) => event.spanId)).toEqual(all.map((event) => event.spanId));
    stuck.release();
    await flushed;
    expect(stuck.received.map((event) => event.spanId)).toEqual(all.map((event) => event.spanId));
  });

  it('flushes in the background after flushIntervalMs', async () => {
    const sink = recorder();
    const queue = new ExportQueue([sink.exporter], { flushIntervalMs: 5 });
    queue.enqueue(events(1)[0]!);
    // No flush called: the timer sends it.
    await until(() => sink.all().length === 1, 'the background flush');
    expect(sink.all()).toHaveLength(1);
  });

  it('catches throwing, rejecting and timed-out exporters and keeps going', async () => {
    const errors: string[] = [];
    const sink = recorder();
    const throwing: EventExporter = {
      name: 'throwing',
      export() {
        throw new Error('sync boom');
      },
    };
    const rejecting: EventExporter = {
      name: 'rejecting',
      export: async () => Promise.reject(new Error('async boom')),
    };
    const stuck: EventExporter = { name: 'stuck', export: () => new Promise<void>(() => {}) };
    const queue = new ExportQueue([throwing, rejecting, stuck, sink.exporter], {
      exportTimeoutMs: 30,
      onExporterError: (name, error) => {
        errors.push(`${name}: ${(error as Error).message}`);
        throw new Error('a reporter that throws is ignored');
      },
    });
    queue.enqueue(events(1)[0]!);
    await queue.flush();
    expect(sink.all()).toHaveLength(1);
    expect(errors.sort()).toEqual([
      'rejecting: async boom',
      'stuck: timed out after 30 ms',
      'throwing: sync boom',
    ]);
  });

  it('writes exporter failures to stderr by default', async () => {
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const queue = new ExportQueue([{ name: 'bad', export: async () => Promise.reject(new Error('nope')) }]);
      queue.enqueue(events(1)[0]!);
      await queue.flush();
    } finally {
      process.stderr.write = original;
    }
    expect(written.join('')).toContain('[agent-compaction] exporter bad failed: nope');
  });

  it('redacts the default error line (an error quoting a URL with a key)', async () => {
    const key = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const failing = async () =>
        Promise.reject(new Error(`POST https://hooks.example.com/in?token=${key}: 500`));
      const queue = new ExportQueue([{ name: 'hook', export: failing }]);
      queue.enqueue(events(1)[0]!);
      await queue.flush();
    } finally {
      process.stderr.write = original;
    }
    const line = written.join('');
    expect(line).toContain(
      '[agent-compaction] exporter hook failed: POST https://hooks.example.com/in?token=',
    );
    expect(line).not.toContain(key.slice(4, 12));
    expect(line).not.toContain(key.slice(-8));
  });

  it('shutdown flushes, calls forceFlush and shutdown once, and ignores later events', async () => {
    const calls: string[] = [];
    const sink = recorder();
    const exporter: EventExporter = {
      name: 'lifecycle',
      export: sink.exporter.export,
      async forceFlush() {
        calls.push('forceFlush');
      },
      async shutdown() {
        calls.push('shutdown');
      },
    };
    const queue = new ExportQueue([exporter]);
    queue.enqueue(events(1)[0]!);
    await Promise.all([queue.shutdown(), queue.shutdown()]);
    expect(sink.all()).toHaveLength(1);
    expect(calls).toEqual(['forceFlush', 'shutdown']);
    queue.enqueue(events(1)[0]!);
    expect(queue.size).toBe(0);
    await queue.flush();
    expect(sink.all()).toHaveLength(1);
  });

  it('does nothing without exporters and resolves flush at once', async () => {
    const queue = new ExportQueue([]);
    queue.enqueue(events(1)[0]!);
    expect(queue.size).toBe(0);
    await expect(queue.flush()).resolves.toBeUndefined();
    await expect(queue.shutdown()).resolves.toBeUndefined();
  });

  it('an async onExporterError that rejects leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const failing: EventExporter = {
        name: 'failing',
        async export() {
          throw new Error('down');
        },
      };
      const queue = new ExportQueue([failing], {
        onExporterError: async () => {
          throw new Error('reporter down');
        },
      });
      queue.enqueue(sampleCompactionEvents()[0]!);
      await queue.flush();
      // Unhandled rejections are reported before the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent, EventExporter } from '../core/events/events.js';
import { sampleCompactionEvents } from './sample-events.js';

/** An exporter wired to a receiver the test controls. */
export interface ExporterHarness {
  exporter: EventExporter;
  /** Everything the destination received so far, as text (wire bodies, lines, ...). */
  received(): Promise<string> | string;
  /** Stops the receiver. */
  close(): Promise<void>;
}

/** Options of {@link describeExporterConformance}. */
export interface ExporterConformanceOptions {
  /** Shown in the test names. */
  name: string;
  /** Creates an exporter and a working receiver. */
  create(): Promise<ExporterHarness>;
  /** Creates an exporter whose destination fails (closed port, broken stream). */
  createFailing(): Promise<{ exporter: EventExporter; close(): Promise<void> }>;
  /**
   * The receiver shows each event's own span id (false for OTel, whose SDK mints ids).
   * @default true
   */
  keepsSpanIds?: boolean;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

async function settle(exporter: EventExporter, events: readonly AnyCompactEvent[]): Promise<void> {
  await exporter.export(events);
  await exporter.forceFlush?.();
}

/**
 * Registers the exporter contract tests (see `defineExporter` for the contract) for one
 * exporter factory. Every exporter in this package runs it; run it on yours.
 *
 * @example
 * ```ts
 * describeExporterConformance({
 *   name: 'ariadne',
 *   async create() { const server = await startAriadneTestServer(); ... },
 *   async createFailing() { return { exporter: ariadneExporter({ url: closedPortUrl }), close: async () => {} } },
 * });
 * ```
 */
export function describeExporterConformance(options: ExporterConformanceOptions): void {
  const keepsSpanIds = options.keepsSpanIds ?? true;
  describe(`exporter conformance: ${options.name}`, () => {
    it('has a short non-empty name', async () => {
      const harness = await options.create();
      try {
        expect(typeof harness.exporter.name).toBe('string');
        expect(harness.exporter.name.length).toBeGreaterThan(0);
        expect(harness.exporter.name.length).toBeLessThan(40);
      } finally {
        await harness.close();
      }
    });

    it("delivers a compaction's events with their figures and summary text", async () => {
      const harness = await options.create();
      try {
        const summary = 'Goal: ship v2 ✓. Decided: keep the parser; next, fix test_é_unicode.';
        const events = sampleCompactionEvents({ sessionId: 'conformance-session', summary });
        await settle(harness.exporter, events);
        const received = await harness.received();
        expect(received).toContain('conformance-session');
        expect(received).toContain('14210');
        expect(received).toContain('fix test_é_unicode');
        if (keepsSpanIds) for (const event of events) expect(received).toContain(event.spanId);
      } finally {
        await harness.close();
      }
    });

    it('resolves on an empty batch', async () => {
      const harness = await options.create();
      try {
        await expect(harness.exporter.export([])).resolves.toBeUndefined();
      } finally {
        await harness.close();
      }
    });

    it('never mutates the events it receives', async () => {
      const harness = await options.create();
      try {
        const events = sampleCompactionEvents({ withError: true });
        const before = JSON.stringify(events);
        deepFreeze(events);
        await settle(harness.exporter, events);
        expect(JSON.stringify(events)).toBe(before);
      } finally {
        await harness.close();
      }
    });

    robustnessTests(options);
  });
}

/** Odd events, a failing destination, shutdown: an exporter never costs the conversation. */
function robustnessTests(options: ExporterConformanceOptions): void {
  it('tolerates odd events (missing fields, bad times, huge strings) without rejecting', async () => {
    const harness = await options.create();
    try {
      const [estimate, , summary] = sampleCompactionEvents();
      const odd = [
        { ...estimate, properties: {} },
        { ...estimate, startTime: Number.NaN, endTime: -1 },
        { ...summary, properties: { ...(summary?.properties as object), summary: 'x'.repeat(300_000) } },
        { ...estimate, parentId: undefined, name: 'compact.custom' },
      ] as unknown as AnyCompactEvent[];
      await expect(settle(harness.exporter, odd)).resolves.toBeUndefined();
    } finally {
      await harness.close();
    }
  });

  it('resolves (never throws) when the destination fails', async () => {
    const failing = await options.createFailing();
    try {
      await expect(settle(failing.exporter, sampleCompactionEvents())).resolves.toBeUndefined();
      await expect(failing.exporter.shutdown?.() ?? Promise.resolve()).resolves.toBeUndefined();
    } finally {
      await failing.close();
    }
  });

  it('shuts down twice and ignores exports after shutdown', async () => {
    const harness = await options.create();
    try {
      await harness.exporter.shutdown?.();
      await harness.exporter.shutdown?.();
      const events = sampleCompactionEvents({ sessionId: 'after-shutdown-session' });
      await expect(harness.exporter.export(events)).resolves.toBeUndefined();
      expect(await harness.received()).not.toContain('after-shutdown-session');
    } finally {
      await harness.close();
    }
  });
}

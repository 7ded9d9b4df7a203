import { describe, expect, it } from 'vitest';
import type { ArchivedSummary, StorageAdapter } from '../core/archive/storage-adapter.js';
import type { AnyCompactEvent } from '../core/events/events.js';
import { sampleCompactionEvents } from './sample-events.js';

/** An adapter plus a way to read back what it wrote. */
export interface StorageHarness {
  adapter: StorageAdapter;
  /** Reads the text of what a `saveTranscript`/`saveSummary` location points to. */
  read(location: string): Promise<string>;
  /** Every event saved for a session, parsed, in the adapter's order. */
  readEvents(sessionId: string): Promise<unknown[]>;
  /** True when `location` lies inside the adapter's root (directory or bucket prefix). */
  isInsideRoot(location: string): boolean;
  close(): Promise<void>;
}

/** Options of {@link describeStorageConformance}. */
export interface StorageConformanceOptions {
  /** Shown in the test names. */
  name: string;
  create(): Promise<StorageHarness>;
  /**
   * `false`: the adapter has no `latestSummaryStep` (optional in the contract: without it a
   * store that lost its data gets no version floor from the archive); its test is skipped,
   * visibly. @default true (required)
   */
  latestSummaryStep?: boolean;
}

function summaryOf(sessionId: string, step: number, text: string): ArchivedSummary {
  return {
    sessionId,
    step,
    text: `<COMPACT-SUMMARY v${step}>\n${text}\n</COMPACT-SUMMARY>`,
    tokens: 42,
    strategy: 'task_state',
    summarizer: 'embedded',
    coveredIds: ['m-1', 'm-2'],
    createdAt: Date.UTC(2025, 9, 19, 12, 34, 56),
  };
}

/**
 * Registers the `StorageAdapter` contract tests for one adapter: the archive layout,
 * round trips, event order, concurrent appends, unsafe session ids.
 *
 * @example
 * ```ts
 * describeStorageConformance({ name: 'fs', async create() { ... } });
 * ```
 */
export function describeStorageConformance(options: StorageConformanceOptions): void {
  describe(`storage conformance: ${options.name}`, () => {
    const withHarness = async (run: (harness: StorageHarness) => Promise<void>) => {
      const harness = await options.create();
      try {
        await run(harness);
      } finally {
        await harness.adapter.close?.();
        await harness.close();
      }
    };

    it('has a name', () =>
      withHarness(async ({ adapter }) => {
        expect(adapter.name).toMatch(/^[a-z0-9-]+$/);
      }));

    archiveNameTests(options, withHarness);
    eventTests(withHarness);
    sessionIdTests(withHarness);
  });
}

type WithHarness = (run: (harness: StorageHarness) => Promise<void>) => Promise<void>;

/** Archive names and round trips: nothing is ever replaced. */
function archiveNameTests(options: StorageConformanceOptions, withHarness: WithHarness): void {
  it('saves the transcript as JSON lines named transcript-pre-compact-{step:03d}-{id}.jsonl', () =>
    withHarness(async ({ adapter, read }) => {
      const transcript = [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'Fix the parser ✓ — ünïcode\nand newlines' },
        { type: 'function_call', call_id: 'c1', name: 'grep', arguments: '{"q":"x"}' },
      ];
      const location = await adapter.saveTranscript('session-abc-123', transcript, 1);
      expect(location).toMatch(
        /session-abc-123[/\\]transcript-pre-compact-001-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl$/,
      );
      const lines = (await read(location)).trimEnd().split('\n');
      expect(lines.map((line) => JSON.parse(line))).toEqual(transcript);
    }));

  it('saves each summary under a new name summary-{step:03d}-{id}.json, never replacing one', () =>
    withHarness(async ({ adapter, read }) => {
      const first = await adapter.saveSummary('s1', summaryOf('s1', 12, 'first'), 12);
      expect(first).toMatch(/s1[/\\]summary-012-[0-9a-z]{9}-[0-9a-f]{8}\.json$/);
      const second = await adapter.saveSummary('s1', summaryOf('s1', 12, 'second'), 12);
      expect(second).not.toBe(first);
      expect(second > first).toBe(true);
      expect(JSON.parse(await read(first))).toEqual(summaryOf('s1', 12, 'first'));
      expect(JSON.parse(await read(second))).toEqual(summaryOf('s1', 12, 'second'));
    }));

  it.skipIf(options.latestSummaryStep === false)(
    'reports the highest archived summary step of a session (latestSummaryStep: the version floor)',
    () =>
      withHarness(async ({ adapter }) => {
        if (!adapter.latestSummaryStep)
          throw new Error(`${adapter.name} has no latestSummaryStep (pass latestSummaryStep: false)`);
        expect(await adapter.latestSummaryStep('floor')).toBeUndefined();
        for (const step of [3, 12, 7])
          await adapter.saveSummary('floor', summaryOf('floor', step, 'x'), step);
        // A later transcript step, another session's summaries, a session whose id extends this one's: not counted.
        await adapter.saveTranscript('floor', [{ role: 'user', content: 'later' }], 20);
        await adapter.saveSummary('floor-2', summaryOf('floor-2', 30, 'x'), 30);
        await adapter.saveEvent('floor', sampleCompactionEvents({ sessionId: 'floor' })[0]!);
        expect(await adapter.latestSummaryStep('floor')).toBe(12);
        expect(await adapter.latestSummaryStep('floor-2')).toBe(30);
        expect(await adapter.latestSummaryStep('other')).toBeUndefined();
      }),
  );

  it('saves each transcript under a new name, never replacing one', () =>
    withHarness(async ({ adapter, read }) => {
      const first = await adapter.saveTranscript('s2', [{ role: 'user', content: 'first run' }], 1);
      const second = await adapter.saveTranscript('s2', [{ role: 'user', content: 'second run' }], 1);
      expect(second).not.toBe(first);
      expect(await read(first)).toContain('first run');
      expect(await read(second)).toContain('second run');
    }));
}

/** Events: in order, never lost or mixed across concurrent sessions. */
function eventTests(withHarness: WithHarness): void {
  it('keeps events in order', () =>
    withHarness(async ({ adapter, readEvents }) => {
      const events = sampleCompactionEvents({ sessionId: 'ordered' });
      for (const event of events) await adapter.saveEvent('ordered', event);
      expect(await readEvents('ordered')).toEqual(JSON.parse(JSON.stringify(events)));
    }));

  it(
    'never loses or mixes events of concurrent sessions and calls',
    () =>
      withHarness(async ({ adapter, readEvents }) => {
        const sessions = ['alpha', 'beta', 'gamma'];
        const byId = new Map<string, AnyCompactEvent[]>();
        const writes: Promise<void>[] = [];
        for (const session of sessions) {
          const events: AnyCompactEvent[] = [];
          for (let round = 0; round < 4; round++) {
            events.push(
              ...sampleCompactionEvents({ sessionId: session, summary: `${session} ${'x'.repeat(5000)}` }),
            );
          }
          byId.set(session, events);
          for (const event of events) writes.push(adapter.saveEvent(session, event));
        }
        await Promise.all(writes);
        for (const session of sessions) {
          const saved = (await readEvents(session)) as AnyCompactEvent[];
          expect(saved).toHaveLength(byId.get(session)?.length ?? -1);
          expect(saved.every((event) => event.sessionId === session)).toBe(true);
          expect(new Set(saved.map((event) => event.spanId))).toEqual(
            new Set(byId.get(session)?.map((event) => event.spanId)),
          );
        }
      }),
    // Dozens of appends per session race each other: minutes on a slow machine's S3 server.
    600_000,
  );
}

/** Unsafe session ids and steps. */
function sessionIdTests(withHarness: WithHarness): void {
  it('keeps unsafe session ids inside the root and apart from each other', () =>
    withHarness(async ({ adapter, isInsideRoot, read }) => {
      const ids = [
        '../../etc',
        '..',
        '.',
        '',
        'a/b',
        'a\\b',
        'a%2Fb',
        'nul\u0000byte',
        'tab\tx',
        'Case',
        'case',
        'ü',
      ];
      const locations = new Set<string>();
      for (const id of ids) {
        const location = await adapter.saveTranscript(id, [{ id }], 1);
        expect(isInsideRoot(location), `${JSON.stringify(id)} -> ${location}`).toBe(true);
        expect(location).not.toMatch(/[\u0000-\u001f]/);
        locations.add(location.toLowerCase());
        expect(JSON.parse((await read(location)).trim())).toEqual({ id });
      }
      expect(locations.size).toBe(ids.length);
    }));

  it('rejects a negative or fractional step', () =>
    withHarness(async ({ adapter }) => {
      await expect(adapter.saveTranscript('s', [], -1)).rejects.toThrow();
      await expect(adapter.saveSummary('s', summaryOf('s', 1, 'x'), 1.5)).rejects.toThrow();
    }));
}

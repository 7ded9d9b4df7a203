import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { validateAriadneEvent } from '../../testing/ariadne-test-server.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { toAriadneSpan } from './ariadne-exporter.js';

const FIXTURE = new URL('../../../test/fixtures/exporters/ariadne-compaction-spans.json', import.meta.url);

/** The sample compaction with fixed ids and times, so the wire format can be pinned. */
function fixedEvents(): AnyCompactEvent[] {
  return sampleCompactionEvents({
    sessionId: 'session-abc-123',
    traceId: 'session-abc-123',
    parentId: 'before-model-call-01',
    operationId: 'op-0001',
    start: Date.UTC(2025, 9, 19, 12, 34, 56, 0),
    withError: true,
  }).map(
    (event, index) => ({ ...event, spanId: `span-${String(index).padStart(2, '0')}` }) as AnyCompactEvent,
  );
}

describe('Ariadne wire format (golden)', () => {
  it('matches test/fixtures/exporters/ariadne-compaction-spans.json', async () => {
    const spans = fixedEvents().map((event) => toAriadneSpan(event));
    if (process.env.UPDATE_FIXTURES) await writeFile(FIXTURE, `${JSON.stringify(spans, null, 2)}\n`);
    expect(spans).toEqual(JSON.parse(await readFile(FIXTURE, 'utf8')));
    for (const [index, span] of spans.entries()) {
      expect(validateAriadneEvent(span, `batch.${index}`).issues).toEqual([]);
    }
  });
});

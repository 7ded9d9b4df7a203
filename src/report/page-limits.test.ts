import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../core/events/events.js';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { REPORT_PAGE_SUMMARY_CHARS, REPORT_SUMMARY_CHARS } from './render-cards.js';
import { REPORT_CHARTED_SESSIONS, renderReport } from './render-report.js';
import { buildTraceModel } from './trace-model.js';

/** One compaction for each of `sessions` sessions, each with a summary of `chars` characters. */
function traceOf(sessions: number, chars: number) {
  const events: AnyCompactEvent[] = [];
  for (let i = 0; i < sessions; i++)
    events.push(
      ...sampleCompactionEvents({ sessionId: `s-${i}`, summary: `Goal ${i}\n${'x'.repeat(chars)}` }),
    );
  return buildTraceModel(events);
}

describe('a page of many sessions or long summaries stays a page a browser loads', () => {
  it('shows summaries up to one budget for the whole page, then says where the rest are', () => {
    const html = renderReport(traceOf(500, 60_000), { source: 't' });
    // Before: every card showed its 60,000 characters, a page of 31 MB.
    expect(html.length).toBeLessThan(REPORT_PAGE_SUMMARY_CHARS + 2_000_000);
    expect(html).toContain('>Goal 0<');
    expect(html).not.toContain('>Goal 499<');
    expect(html).toMatch(
      /Summary not shown \(60,00\d characters\): this page already shows 1,000,000 characters/,
    );
    expect(html.match(/class="card/g)).toHaveLength(500);
  });

  it('a single long summary is still cut at the card cap, not hidden', () => {
    const html = renderReport(traceOf(1, REPORT_SUMMARY_CHARS * 2), { source: 't' });
    expect(html).toContain('shown 64,000 of 128,007 characters');
    expect(html).not.toContain('Summary not shown');
  });

  it('names and charts the first sessions only, and says how many more there are', () => {
    const sessions = REPORT_CHARTED_SESSIONS + 150;
    const html = renderReport(traceOf(sessions, 10), { source: 't' });
    expect(html.match(/<svg/g)).toHaveLength(REPORT_CHARTED_SESSIONS);
    expect(html).toContain(`s-${REPORT_CHARTED_SESSIONS - 1} and 150 more`);
    expect(html).not.toContain(`, s-${REPORT_CHARTED_SESSIONS},`);
    expect(html).toContain('150 more sessions not charted here');
    // Every compaction keeps its card.
    expect(html.match(/class="card/g)).toHaveLength(sessions);
  });

  it('a trace of a few sessions charts each, with no note', () => {
    const html = renderReport(traceOf(3, 10), { source: 't' });
    expect(html.match(/<svg/g)).toHaveLength(3);
    expect(html).not.toContain('not charted');
  });
});

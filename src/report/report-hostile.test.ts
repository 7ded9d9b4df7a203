import { describe, expect, it } from 'vitest';
import { hostileTraceText, PAYLOADS } from '../../test/support/hostile-trace.js';
import type { AnyCompactEvent } from '../core/events/events.js';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { renderReport } from './render-report.js';
import { buildTraceModel, parseTrace } from './trace-model.js';

/** The sample compaction with `properties` of the named events changed. */
function withProperties(changes: Record<string, Record<string, unknown>>): AnyCompactEvent[] {
  return sampleCompactionEvents({ sessionId: 's' }).map(
    (event) =>
      ({
        ...event,
        properties: { ...event.properties, ...(changes[event.name] ?? {}) },
      }) as AnyCompactEvent,
  );
}

/** Tags the page writes itself, by count; an injected one changes a count or adds a tag. */
function tagCounts(html: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const match of html.matchAll(/<([a-zA-Z][\w-]*)/g)) {
    const tag = match[1]!.toLowerCase();
    counts[tag] = (counts[tag] ?? 0) + 1;
  }
  return counts;
}

describe('the report reads a trace from elsewhere as data', () => {
  it('skips a version that is not a number, with a note, and never writes it raw (meta refresh)', () => {
    const events = withProperties({
      'compact.pruned_messages': { version: PAYLOADS.refresh },
      'compact.summary_created': { version: PAYLOADS.refresh },
    });
    const trace = buildTraceModel(events);
    expect(trace.compactions[0]?.version).toBeUndefined();
    expect(trace.notes).toContain('compact.pruned_messages.version: not a finite number, skipped');
    const html = renderReport(trace, { source: 't' });
    expect(html).not.toContain('<meta http-equiv="refresh"');
    expect(html).toContain('Skipped trace fields');
  });

  it('reads numbers only when finite and strings only when strings; a wrong shape never throws', () => {
    const events = withProperties({
      'compact.pruned_messages': {
        tokensBefore: '<b>9</b>',
        tokensAfter: Number.POSITIVE_INFINITY,
        kept: 'all of it',
        prunedCount: { n: 1 },
      },
      'compact.summary_created': { summary: { toString: '<b>' }, summarizer: 7, summaryTokens: '480' },
      'compact.trigger_decision': { reason: ['x'], manual: 'yes', note: 3 },
    });
    const [compaction] = buildTraceModel(events).compactions;
    expect(compaction).toMatchObject({ reason: 'unknown', manual: false, tokensBefore: 112_345 });
    expect(compaction?.tokensAfter).toBe(112_345);
    expect(compaction?.kept).toEqual({ pinned: 3, recentTurns: 6, toolPairs: 4 });
    expect(compaction?.summary).toBeUndefined();
    expect(compaction?.summarizer).toBeUndefined();
    expect(compaction?.summaryTokens).toBeUndefined();
    expect(compaction?.note).toBeUndefined();
    expect(compaction?.prunedCount).toBeUndefined();
  });

  it('renders the hostile trace with every payload escaped, attributes included', () => {
    const trace = buildTraceModel(parseTrace(hostileTraceText(), 'hostile.jsonl'));
    expect(trace.compactions).toHaveLength(2);
    const html = renderReport(trace, { source: PAYLOADS.base });
    for (const payload of Object.values(PAYLOADS)) {
      expect(html).not.toContain(payload);
    }
    const counts = tagCounts(html);
    expect(counts).toMatchObject({ meta: 3, style: 1, title: 1 + 2 + 1 });
    for (const tag of ['form', 'input', 'base', 'img', 'link', 'iframe', 'image', 'script', 'button'])
      expect(counts[tag]).toBeUndefined();
    // No attribute value is broken out of: every `"` inside a tag closes an attribute the page opened.
    for (const tag of html.match(/<[a-zA-Z][^>]*>/g) ?? []) {
      expect(tag).toMatch(/^<[a-zA-Z][\w-]*(?:\s+[\w:-]+(?:="[^"<>]*")?)*\s*\/?>$/);
      expect(tag.replace(/="[^"]*"/g, '')).not.toMatch(/\son[a-z]+/i);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { escapeHtml } from './html-escape.js';
import { lineDiff } from './line-diff.js';
import { REPORT_SUMMARY_CHARS } from './render-cards.js';
import { renderReport } from './render-report.js';
import { buildTraceModel, parseTrace } from './trace-model.js';

describe('lineDiff', () => {
  it('marks kept, added and removed lines in order', () => {
    expect(lineDiff('a\nb\nc', 'a\nc\nd')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'd' },
    ]);
    expect(lineDiff('', 'x')).toEqual([{ kind: 'added', text: 'x' }]);
  });
});

describe('escapeHtml', () => {
  it('escapes the five characters that matter', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('parseTrace', () => {
  it('names the broken line and rejects lines that are not events', () => {
    const good = JSON.stringify(sampleCompactionEvents()[0]);
    expect(() => parseTrace(`${good}\n\n{oops`, 't.jsonl')).toThrow(/t\.jsonl line 3: not valid JSON/);
    expect(() => parseTrace(`${good}\n{"role":"user"}`, 't.jsonl')).toThrow(/line 2: not a compaction event/);
    expect(() => parseTrace('  \n', 't.jsonl')).toThrow(/empty/);
  });
});

describe('buildTraceModel and renderReport', () => {
  it('reads a compaction with its levels, summary and fallback, and escapes it in the page', () => {
    const events = sampleCompactionEvents({
      sessionId: 's-1',
      summary: 'Goal: <b>bold</b> & done',
      withError: true,
    });
    const trace = buildTraceModel(events);
    expect(trace.calls).toHaveLength(1);
    expect(trace.compactions).toHaveLength(1);
    const [compaction] = trace.compactions;
    expect(compaction?.summary).toBe('Goal: <b>bold</b> & done');
    expect(compaction?.errors.length).toBeGreaterThan(0);
    expect(compaction?.fallback).not.toBe('none');
    const html = renderReport(trace, { source: 'sample <trace>' });
    expect(html).toContain('Goal: &lt;b&gt;bold&lt;/b&gt; &amp; done');
    expect(html).not.toContain('<b>bold</b>');
    expect(html).toContain('sample &lt;trace&gt;');
    expect(html.match(/class="compaction-marker/g)).toHaveLength(1);
    expect(html).toContain('class="card has-error"');
  });
});

describe('a level that added tokens (issue 48)', () => {
  it('reads "none (added N)" on the card and in the replay table, never a negative "freed"', async () => {
    const { levelsText } = await import('../cli/replay/format-table.js');
    const trace = buildTraceModel(sampleCompactionEvents({ sessionId: 's-1' }));
    const compaction = trace.compactions[0]!;
    const added = {
      ...compaction,
      levels: [...compaction.levels, { level: 'summarize', count: 3, tokensSaved: -334, refs: [] }],
    };
    const html = renderReport({ ...trace, compactions: [added] }, { source: 't' });
    expect(html).toContain('none (added 334)');
    expect(html).not.toMatch(/<td class="num">-[\d,]+<\/td>/);
    expect(levelsText(added)).toMatch(/summarized none \(added 334\)$/);
    expect(levelsText(added)).not.toContain('-334');
  });
});

describe('a trace of two sessions', () => {
  it("marks a session's first summary as first, never as changes from the other session's", () => {
    const events = [
      ...sampleCompactionEvents({ sessionId: 'alpha', operationId: 'op-a1', summary: 'Goal: alpha v1' }),
      ...sampleCompactionEvents({ sessionId: 'beta', operationId: 'op-b1', summary: 'Goal: beta v1' }),
      ...sampleCompactionEvents({ sessionId: 'alpha', operationId: 'op-a2', summary: 'Goal: alpha v2' }),
    ];
    const html = renderReport(buildTraceModel(events), { source: 't' });
    const cards = html.split('<section class="card').slice(1);
    expect(cards).toHaveLength(3);
    expect(cards[1]).toContain('first summary');
    expect(cards[1]).not.toContain('<del');
    expect(cards[2]).toContain('<del class="line removed">Goal: alpha v1</del>');
    expect(cards[1]).toContain('session beta');
  });
});

describe('counts in words', () => {
  it('says "1 call", "1 compaction", "1 error", never "1 calls"', () => {
    const html = renderReport(
      buildTraceModel(sampleCompactionEvents({ sessionId: 's-1', withError: true })),
      {
        source: 't',
      },
    );
    const facts = html.match(/<ul class="facts">.*?<\/ul>/)?.[0] ?? '';
    expect(facts).toContain('<li>1 call</li>');
    expect(facts).toContain('<li>1 compaction</li>');
    expect(facts).not.toMatch(/<li>1 [a-z]+s<\/li>/);
  });
});

describe('a trace from before operationId', () => {
  it("groups each call's events from its token estimate: one call per compaction, its tokens after", () => {
    const withIds = [
      ...sampleCompactionEvents({ sessionId: 's-1', summary: 'Goal: one' }),
      ...sampleCompactionEvents({ sessionId: 's-1', summary: 'Goal: two' }),
    ];
    const old = withIds.map(({ operationId: _dropped, ...event }) => event) as typeof withIds;
    const expected = buildTraceModel(withIds);
    const trace = buildTraceModel(old);
    expect(trace.calls).toHaveLength(2);
    expect(trace.compactions.map((c) => [c.tokensBefore, c.tokensAfter])).toEqual(
      expected.compactions.map((c) => [c.tokensBefore, c.tokensAfter]),
    );
  });
});

describe('a very long summary (review 82u)', () => {
  it('a card shows its first REPORT_SUMMARY_CHARS characters and says so; the page stays small', () => {
    // Before, a card rendered its summary whole: a 10 MB trace made a page a browser could not load.
    const long = `Goal: keep going.\n${'a fact worth keeping, line after line. '.repeat(50_000)}`;
    const events = [
      ...sampleCompactionEvents({ sessionId: 's-1', operationId: 'op-1', summary: long }),
      ...sampleCompactionEvents({ sessionId: 's-1', operationId: 'op-2', summary: `${long}\nDone: more.` }),
    ];
    const trace = buildTraceModel(events);
    expect(trace.compactions[1]?.summary).toHaveLength(long.length + 12);
    const html = renderReport(trace, { source: 't' });
    expect(long.length).toBeGreaterThan(1_900_000);
    expect(html.length).toBeLessThan(2 * REPORT_SUMMARY_CHARS + 100_000);
    const cards = html.split('<section class="card').slice(1);
    expect(cards[0]).toContain(
      `shown ${REPORT_SUMMARY_CHARS.toLocaleString('en-US')} of ${long.length.toLocaleString('en-US')} characters; the whole summary is in the trace`,
    );
    expect(cards[0]).toContain('<span class="line">Goal: keep going.</span>');
    expect(cards[1]).toContain('shown plain: too long to compare');
    expect(cards[1]).toContain(`of ${(long.length + 12).toLocaleString('en-US')} characters`);
  });

  it('a summary within the cap is shown whole, with no note', () => {
    const html = renderReport(
      buildTraceModel(sampleCompactionEvents({ sessionId: 's-1', summary: 'Goal: x' })),
      {
        source: 't',
      },
    );
    expect(html).toContain('<span class="line">Goal: x</span>');
    expect(html).not.toContain('the whole summary is in the trace');
  });
});

import { describe, expect, it } from 'vitest';
import { runSteps } from '../../time-slice.js';
import { parsePrevious, supersedeCarriedSteps } from './parse-previous.js';
import { renderSummary } from './render-summary.js';
import type { Unit } from './types.js';

describe('parsing the previous summary', () => {
  it('reads back segments, speakers, tool facts and key identifiers', () => {
    const body = [
      'Note: manual compaction',
      '## Key entities and identifiers',
      '- #W4829113',
      '- credit_card_7719342',
      '## 8 May 2023',
      '- Caroline: I went to the support group yesterday (7 May 2023). We adopted a corgi named Waffles.',
      '- cancel_pending_order(#W4829113) → Error: order already shipped',
      '## Conversation',
      '- user: Push everything to the branch fix/ledger-12.',
    ].join('\n');
    const parsed = parsePrevious(body);
    expect(parsed.ids).toEqual(['#W4829113', 'credit_card_7719342']);
    expect(parsed.segments.map((s) => s.label)).toEqual(['8 May 2023', 'Conversation']);
    expect(parsed.segments[0]!.date?.toISOString()).toBe('2023-05-08T00:00:00.000Z');
    expect(parsed.units.map((u) => [u.segment, u.speaker, u.source, u.text])).toEqual([
      [0, 'Caroline', 'summary', 'I went to the support group yesterday (7 May 2023).'],
      [0, 'Caroline', 'summary', 'We adopted a corgi named Waffles.'],
      [0, 'cancel_pending_order', 'tool', 'cancel_pending_order(#W4829113) → Error: order already shipped'],
      [1, 'user', 'user', 'Push everything to the branch fix/ledger-12.'],
    ]);
    expect(parsed.units[2]!.tool).toMatchObject({ stateChanging: true, failed: true });
    // Previous units sit before every new unit, in their order.
    expect(
      parsed.units.every((u, k) => u.order < 0 && (k === 0 || u.order > parsed.units[k - 1]!.order)),
    ).toBe(true);
  });

  it('reads a heading without its year in the year of the dated heading before it, as the layout writes it', () => {
    const segments = [
      { label: '30 December 2022', date: new Date(Date.UTC(2022, 11, 30)) },
      { label: '31 December 2022', date: new Date(Date.UTC(2022, 11, 31)) },
      { label: '2 January 2023', date: new Date(Date.UTC(2023, 0, 2)) },
      { label: '9 January 2023', date: new Date(Date.UTC(2023, 0, 9)) },
    ];
    const units: Unit[] = segments.map((_, segment) => ({
      text: `Fact ${segment} about Lisbon.`,
      speaker: 'Mel',
      source: 'summary',
      segment,
      order: segment,
      words: ['fact', 'lisbon'],
      value: 1,
    }));
    const body = renderSummary({ segments, units, ids: [] });
    // The year is written once per year: a heading in the same year as the one before omits it.
    expect(body.split('\n').filter((line) => line.startsWith('## '))).toEqual([
      '## 30 December 2022',
      '## 31 December',
      '## 2 January 2023',
      '## 9 January',
    ]);
    const parsed = parsePrevious(body, true);
    expect(parsed.segments).toEqual(segments);
    expect(parsed.units.map((u) => u.segment)).toEqual([0, 1, 2, 3]);
  });

  it('reads back the layout between people (a dated first line, no bullets) as it renders it', () => {
    const segments = [
      { label: '30 December 2022', date: new Date(Date.UTC(2022, 11, 30)) },
      { label: '2 January 2023', date: new Date(Date.UTC(2023, 0, 2)) },
      { label: '9 January 2023', date: new Date(Date.UTC(2023, 0, 9)) },
    ];
    const unit = (segment: number, speaker: string, text: string, order: number): Unit => ({
      text,
      speaker,
      source: 'summary',
      segment,
      order,
      words: [],
      value: 1,
    });
    const units = [
      unit(0, 'Mel', 'We moved to Lisbon.', 0),
      unit(1, 'Caro', 'I adopted a corgi named Waffles yesterday (1 January 2023).', 1),
      unit(1, 'Mel', 'My sister Ana visited.', 2),
      unit(2, 'Mel', 'I sold the old Corolla.', 3),
    ];
    const body = renderSummary({ segments, units, ids: ['BILL-2207'], people: true });
    expect(body).toBe(
      [
        '## Key entities and identifiers',
        '- BILL-2207',
        '## Conversation',
        '30 December 2022, Mel: We moved to Lisbon.',
        '2 January 2023, Caro: I adopted a corgi named Waffles yesterday (1 January 2023).',
        'Mel: My sister Ana visited.',
        '9 January, Mel: I sold the old Corolla.',
      ].join('\n'),
    );
    const parsed = parsePrevious(body, true);
    expect(parsed.ids).toEqual(['BILL-2207']);
    // The section's heading opens an empty undated segment; each dated line opens its own.
    expect(parsed.segments.filter((s) => s.date)).toEqual(segments);
    expect(parsed.units.map((u) => [parsed.segments[u.segment]!.label, u.speaker, u.text])).toEqual([
      ['30 December 2022', 'Mel', 'We moved to Lisbon.'],
      ['2 January 2023', 'Caro', 'I adopted a corgi named Waffles yesterday (1 January 2023).'],
      ['2 January 2023', 'Mel', 'My sister Ana visited.'],
      ['9 January 2023', 'Mel', 'I sold the old Corolla.'],
    ]);
    // Rendered again from what was read, the body is the same: rolling keeps the layout.
    expect(renderSummary({ ...parsed, units: parsed.units, people: true })).toBe(body);
    // The old layout (a heading per segment, bulleted lines) of an earlier summary still reads the same.
    const old = parsePrevious(renderSummary({ segments, units, ids: ['BILL-2207'] }), true);
    expect(old.units.map((u) => [old.segments[u.segment]!.label, u.speaker, u.text])).toEqual(
      parsed.units.map((u) => [parsed.segments[u.segment]!.label, u.speaker, u.text]),
    );
  });

  it('takes another layout (an older one, an LLM summary) as undated units', () => {
    const parsed = parsePrevious(
      '## Goals\n- Migrate billing to Postgres 15 (BILL-2207).\nFree text line about the rollout plan.',
    );
    expect(parsed.segments.map((s) => s.label)).toEqual(['Goals']);
    expect(parsed.units.map((u) => u.text)).toEqual([
      'Migrate billing to Postgres 15 (BILL-2207).',
      'Free text line about the rollout plan.',
    ]);
    expect(parsePrevious(undefined)).toEqual({ segments: [], units: [], ids: [] });
  });
});

describe('tool lines carried from the previous summary', () => {
  it('a rerun in a later round supersedes the carried result; state changes and lines with other ids stay', () => {
    const previous = parsePrevious(
      [
        '## Conversation',
        '- run_tests(npm test) → Tests 1 failed | 37 passed',
        '- bash(git status) → On branch fix/a-12',
        '- edit_file(package.json) → Edited package.json: 1 replacement.',
        '- cancel_order(#W1) → cancelled',
      ].join('\n'),
    );
    const later = (text: string, order: number): Unit => ({
      text,
      speaker: text.slice(0, text.indexOf('(')),
      source: 'tool',
      segment: 0,
      order,
      words: [],
      tool: { stateChanging: false, failed: false, scratch: false, superseded: false },
      value: 0,
    });
    const units = [
      ...previous.units,
      later('run_tests(npm test) → Tests 40 passed', 1),
      later('bash(git status) → nothing to commit', 2),
      later('edit_file(package.json) → Edited package.json: 1 replacement. (2 calls)', 3),
      later('cancel_order(#W1) → already cancelled', 4),
    ];
    runSteps(supersedeCarriedSteps(units));
    expect(previous.units.map((u) => [u.speaker, u.tool!.superseded])).toEqual([
      ['run_tests', true],
      // The earlier result named a branch the rerun does not.
      ['bash', false],
      // The same echo again: one line is enough.
      ['edit_file', true],
      ['cancel_order', false],
    ]);
    // New facts are left as toolFacts judged them.
    expect(units.slice(previous.units.length).every((u) => !u.tool!.superseded)).toBe(true);
  });
});

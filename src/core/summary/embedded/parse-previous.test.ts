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

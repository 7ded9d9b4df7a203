import { describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../core/events/events.js';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { renderCards } from './render-cards.js';
import { summaryDiff } from './summary-diff.js';
import { buildTraceModel } from './trace-model.js';

const ids = (list: string[]) => list.map((id) => `- ${id}`).join('\n');
const summary = (list: string[], done = 'reproduced the bug') =>
  `## Task\n- fix the parser\n## Key entities and identifiers\n${ids(list)}\n## Conversation\nDone: ${done}.`;

describe('summaryDiff', () => {
  it('marks nothing when a list section was only reordered', () => {
    const before = summary(['src/a.ts', 'TICKET-7', 'u7-19', 'u7-18', 'parser.ts:42']);
    const after = summary(['u7-18', 'parser.ts:42', 'src/a.ts', 'u7-19', 'TICKET-7']);
    expect(summaryDiff(before, after).filter((line) => line.kind !== 'same')).toEqual([]);
  });

  it('marks the identifiers really added and removed, and changed prose lines', () => {
    const before = summary(['src/a.ts', 'TICKET-7', 'u7-19']);
    const after = summary(['u7-19', 'src/b.ts', 'src/a.ts'], 'fixed the bug');
    expect(summaryDiff(before, after).filter((line) => line.kind !== 'same')).toEqual([
      { kind: 'added', text: '- src/b.ts' },
      { kind: 'removed', text: '- TICKET-7' },
      { kind: 'added', text: 'Done: fixed the bug.' },
      { kind: 'removed', text: 'Done: reproduced the bug.' },
    ]);
  });

  it('adds and removes whole sections by heading', () => {
    const diff = summaryDiff('## A\n- x\n## B\n- y', '## A\n- x\n## C\n- z');
    expect(diff).toEqual([
      { kind: 'same', text: '## A' },
      { kind: 'same', text: '- x' },
      { kind: 'added', text: '## C' },
      { kind: 'added', text: '- z' },
      { kind: 'removed', text: '## B' },
      { kind: 'removed', text: '- y' },
    ]);
  });

  it('in a card: a reordered identifier list shows no added or removed line', () => {
    const events: AnyCompactEvent[] = [];
    const orders = [
      ['src/a.ts', 'TICKET-7', 'u7-19', 'u7-18'],
      ['u7-18', 'u7-19', 'TICKET-7', 'src/a.ts'],
    ];
    for (const order of orders)
      events.push(...sampleCompactionEvents({ sessionId: 's', summary: summary(order) }));
    const html = renderCards(buildTraceModel(events).compactions);
    expect(html.match(/<section/g)).toHaveLength(2);
    expect(html).not.toMatch(/<ins|<del/);
  });

  it('in cards: the diffs of a page share one budget; past it a summary is shown whole, and said so', () => {
    // Three prose sections of 1,500 lines: 6.75M cells of alignment per diff, so the page's
    // 16M allow two diffs. Without the shared budget every diff took its full allowance, and a
    // 10 MB trace of such summaries took 20 s to render.
    const long = (c: number) =>
      [0, 1, 2]
        .map((k) => {
          const lines = Array.from({ length: 1500 }, (_, l) =>
            l % 2 === 0 ? `stable ${k}.${l}` : `c${c} ${k}.${l}`,
          );
          return `## Part ${k}\n${lines.join('\n')}`;
        })
        .join('\n');
    const events: AnyCompactEvent[] = [];
    for (let c = 0; c < 4; c++) events.push(...sampleCompactionEvents({ sessionId: 's', summary: long(c) }));
    const cards = renderCards(buildTraceModel(events).compactions).split('<section').slice(1);
    expect(cards).toHaveLength(4);
    expect(cards[0]).toContain('first summary');
    for (const card of cards.slice(1, 3))
      expect(card).toMatch(/changes from the previous summary[\s\S]*<del/);
    expect(cards[3]).toContain('shown whole: too long to compare');
    expect(cards[3]).not.toMatch(/<ins|<del/);
    expect(cards[3]).toContain('c3 2.1499');
  });
});

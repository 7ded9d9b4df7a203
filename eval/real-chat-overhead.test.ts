import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { summaryOverhead } from './real-chat-overhead.js';

describe('real-chat overhead', () => {
  it('splits a summary into headings, line prefixes, resolved dates and the user sections', () => {
    const summary = [
      '<COMPACT-SUMMARY v22>',
      '## Task',
      '- "John: I am doing kickboxing."',
      '## 22 December 2022',
      '- Maria: I donated my old car yesterday (21 December 2022).',
      '## 9 January',
      '- John: I joined a group last week (the week before 9 January 2023).',
      '- Maria: I bought a necklace.',
      '[summary-mark 123]',
      '</COMPACT-SUMMARY>',
    ].join('\n');
    const counter = tokenCounterFor('gpt-4o');
    const count = (lines: string[]) => counter.countText(lines.join('\n'));
    const parts = summaryOverhead('x', summary);
    expect(parts.lines).toBe(4);
    expect(parts.segments).toBe(2);
    expect(parts.total).toBe(count(summary.split('\n').slice(1, -2)));
    expect(parts.headings).toBe(count(['## Task', '## 22 December 2022', '## 9 January']));
    expect(parts.prefixes).toBe(count(['- ', '- Maria: ', '- John: ', '- Maria: ']));
    expect(parts.dates).toBe(count([' (21 December 2022)', ' (the week before 9 January 2023)']));
    expect(parts.head).toBe(count(['## Task', '- "John: I am doing kickboxing."']));
  });
});

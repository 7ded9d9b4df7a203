import { describe, expect, it } from 'vitest';
import { LAYOUTS, layoutSegments } from './real-chat-layouts.js';

describe('real-chat layouts', () => {
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

  it('reads the dated segments back, the user sections and tags left out', () => {
    expect(layoutSegments(summary)).toEqual([
      {
        date: '22 December 2022',
        lines: [{ speaker: 'Maria', text: 'I donated my old car yesterday (21 December 2022).' }],
      },
      {
        date: '9 January',
        lines: [
          { speaker: 'John', text: 'I joined a group last week (the week before 9 January 2023).' },
          { speaker: 'Maria', text: 'I bought a necklace.' },
        ],
      },
    ]);
  });

  it("writes main's layout back as it was, and the dense ones with every line's text", () => {
    const segments = layoutSegments(summary);
    const layout = (name: string) => LAYOUTS[name]!(segments);
    expect(layout('main (## date, - Name: lines)')).toBe(summary.split('\n').slice(3, -2).join('\n'));
    expect(layout('D: date opening the first line, no bullets')).toBe(
      [
        '22 December 2022, Maria: I donated my old car yesterday (21 December 2022).',
        '9 January, John: I joined a group last week (the week before 9 January 2023).',
        'Maria: I bought a necklace.',
      ].join('\n'),
    );
    expect(layout('D2: one line per segment, both speakers')).toBe(
      [
        '22 December 2022, Maria: I donated my old car yesterday (21 December 2022).',
        '9 January, John: I joined a group last week (the week before 9 January 2023). Maria: I bought a necklace.',
      ].join('\n'),
    );
  });
});

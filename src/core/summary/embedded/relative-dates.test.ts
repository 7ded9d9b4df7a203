import { describe, expect, it } from 'vitest';
import { annotateRelativeDate } from './relative-dates.js';

// Monday 8 May 2023.
const monday = new Date(Date.UTC(2023, 4, 8));

describe('relative dates', () => {
  it('resolve days, weekdays both ways, weeks, months and years against the message date', () => {
    const cases: [string, string][] = [
      ['I went yesterday.', 'I went yesterday (7 May 2023).'],
      ['We fly tomorrow', 'We fly tomorrow (9 May 2023)'],
      ['We met last Friday at noon', 'We met last Friday (5 May 2023) at noon'],
      ['The party is next Friday', 'The party is next Friday (12 May 2023)'],
      ['It broke 3 days ago', 'It broke 3 days ago (5 May 2023)'],
      ['I ran a race last week', 'I ran a race last week (the week before 8 May 2023)'],
      ['We went camping last weekend', 'We went camping last weekend (the weekend before 8 May 2023)'],
      ['I started last month', 'I started last month (April 2023)'],
      ['I moved two years ago', 'I moved two years ago (2021)'],
      ['We visited Rome last year', 'We visited Rome last year (2022)'],
      ['She was born next month', 'She was born next month (June 2023)'],
    ];
    for (const [text, resolved] of cases) expect(annotateRelativeDate(text, monday)).toBe(resolved);
  });

  it('resolves every phrase of a sentence once, and leaves text without a date or a phrase alone', () => {
    expect(annotateRelativeDate('Yesterday I booked it for next Friday.', monday)).toBe(
      'Yesterday (7 May 2023) I booked it for next Friday (12 May 2023).',
    );
    const once = annotateRelativeDate('I went yesterday', monday);
    expect(annotateRelativeDate(once, monday)).toBe(once);
    expect(annotateRelativeDate('It broke yesterday', undefined)).toBe('It broke yesterday');
    expect(annotateRelativeDate('No date here, just words.', monday)).toBe('No date here, just words.');
  });
});

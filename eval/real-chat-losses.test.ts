import { describe, expect, it } from 'vitest';
import { formatLosses, formatSurvival, type LossTally } from './real-chat-losses.js';

const tally = (name: string, verbatim: number, summary: number, window: number): LossTally => ({
  name,
  ceiling: 10,
  kinds: { verbatim, summary, pushed: 2, never: 10 - verbatim - summary - 3, split: 1 },
  window,
  windowOnly: { verbatim: 0, summary: 0, pushed: 0, never: 1, split: 0 },
  byAge: { total: [2, 2, 2, 4], kept: [1, 1, 0, 1] },
  pushedRounds: 6,
  lines: { ever: 20, answer: 5, roundsAll: 60, roundsAnswer: 20 },
  lastLines: { all: 8, answer: 4 },
});

describe('real-chat losses', () => {
  it('totals the conversations and reads the multiple from verbatim and summary answers over the window', () => {
    const rows = formatLosses([tally('a', 1, 2, 2), tally('b', 2, 1, 1)]);
    expect(rows).toHaveLength(5);
    expect(rows[2]).toBe('| a | 10 | 1 | 2 | 3 | 2 | 1.5x | 0/1/0 | 2 | 4 | 1 | 3.0 | 1/2 1/2 0/2 1/4 |');
    expect(rows[4]).toBe('| total | 20 | 3 | 3 | 6 | 3 | 2.0x | 0/2/0 | 4 | 8 | 2 | 3.0 | 2/4 2/4 0/4 2/8 |');
  });

  it('gives the answer-holding share of the lines written and of the last summary', () => {
    const [, , row] = formatSurvival([tally('a', 1, 2, 2)]);
    expect(row).toBe('| a | 20 | 5 (25.0%) | 4.0 / 2.7 | 8 | 4 (50.0%) |');
  });
});

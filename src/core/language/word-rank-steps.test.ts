/**
 * Issue 47 point 2: a fresh process's first summary built the rank table of general English
 * (8,000 words, 10-18 ms of CPU cold) inside one step of its scoring, with the words' first
 * rarity. It is now built in steps of a few hundred words, and a lookup made meanwhile finishes
 * the same build. Isolated in vitest.config.ts: the table is process-wide, built once.
 */
import { describe, expect, it } from 'vitest';
import { scoreUnitSteps } from '../summary/embedded/score-units.js';
import type { Unit } from '../summary/embedded/types.js';
import { COMMON_WORDS } from './common-words.js';
import { wordRank, wordRankSteps } from './word-rarity.js';

/** The table as it was built in one piece before. */
function reference(): Map<string, number> {
  const ranks = new Map<string, number>();
  for (const word of COMMON_WORDS.split(/\s+/)) if (word && !ranks.has(word)) ranks.set(word, ranks.size + 1);
  return ranks;
}

const unit = (): Unit => ({
  text: 'We moved here from Sweden and I signed up for a pottery class.',
  speaker: 'user',
  source: 'user',
  segment: 0,
  order: 1,
  words: ['moved', 'sweden', 'signed', 'pottery', 'class'],
  value: 0,
});

/** The steps a scoring of one unit takes. */
const stepsOfScoring = () => {
  let steps = 0;
  const scoring = scoreUnitSteps([unit()], { agentic: false });
  while (!scoring.next().done) steps++;
  return steps;
};

describe('the rank table of general English', () => {
  // First in the file: the process has no table yet.
  it("is built in steps of a fresh process's first scoring, not in one of them", () => {
    const first = stepsOfScoring();
    const again = stepsOfScoring();
    // 8,000 words a few hundred a step; the second scoring finds the table built.
    expect(first - again).toBeGreaterThanOrEqual(8);
  });

  it('gives the same ranks as the table built at once', () => {
    const ranks = reference();
    expect(ranks.size).toBe(8000);
    expect(new Map([...ranks.keys()].map((word) => [word, wordRank(word)]))).toEqual(ranks);
    expect([...wordRankSteps()]).toHaveLength(0);
  });
});

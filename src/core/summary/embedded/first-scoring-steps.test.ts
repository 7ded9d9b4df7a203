/**
 * Issue 47 point 2: a fresh process's first summary built the rank table of general English
 * (8,000 words, 10-18 ms of CPU cold) inside one step of its scoring, with the words' first
 * rarity, and V8 compiled the signals' expressions in the first `textSignal` (12-36 ms). The
 * table is now built in steps of a few hundred words (a lookup made meanwhile finishes the same
 * build), and each expression is compiled in a step of its own. Isolated in vitest.config.ts:
 * both are process-wide, done once.
 */
import { describe, expect, it } from 'vitest';
import { COMMON_WORDS } from '../../language/common-words.js';
import { wordRank, wordRankSteps } from '../../language/word-rarity.js';
import { scoreUnitSteps, textSignal } from './score-units.js';
import type { Unit } from './types.js';

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

describe("a fresh process's first scoring", () => {
  // First in the file: the process has no table yet and has run no signal.
  it('builds the rank table and compiles the signals in steps of its own, not in one of them', () => {
    const signal = textSignal('On Monday we decided to ship it.', 'user', false);
    const first = stepsOfScoring();
    const again = stepsOfScoring();
    // 8,000 words a few hundred a step, then 15 expressions a step each; the second scoring
    // finds both done. The answers do not change.
    expect(first - again).toBeGreaterThanOrEqual(8 + 15);
    expect(textSignal('On Monday we decided to ship it.', 'user', false)).toBe(signal);
  });

  it('gives the same ranks as the table built at once', () => {
    const ranks = reference();
    expect(ranks.size).toBe(8000);
    expect(new Map([...ranks.keys()].map((word) => [word, wordRank(word)]))).toEqual(ranks);
    expect([...wordRankSteps()]).toHaveLength(0);
  });
});

import { describe, expect, it } from 'vitest';
import {
  CONTEXT_THRESHOLDS,
  chooseThresholds,
  nestedContextThresholds,
  type ScoredRow,
} from './instruction-model-context-thresholds.js';
import type { LabelledSentence } from './instruction-model-folds.js';
import { NESTED_BALANCES } from './instruction-model-nested.js';

const scored = (source: string, context: string, truth: boolean, score: number): ScoredRow => ({
  source,
  context,
  truth,
  score,
});

const row = (
  text: string,
  label: LabelledSentence['label'],
  source: string,
  position: LabelledSentence['position'],
): LabelledSentence => ({
  text,
  label,
  source,
  license: 'MIT',
  context: 'assistant',
  position,
  later: 'none',
});

/** Three tiny sources of asks and statements, alone and opening a message. */
function tinySources(): LabelledSentence[] {
  const asks = [
    'Book the earliest train.',
    'Please send me the report.',
    'Write a short poem.',
    "Don't add eggs.",
  ];
  const statements = [
    'The train left at noon.',
    'He bought five apples.',
    'It rained all day.',
    'She likes jazz.',
  ];
  return ['a', 'b', 'c'].flatMap((source) =>
    (['only', 'first'] as const).flatMap((position) => [
      ...asks.map((text) => row(`${text} (${source} ${position})`, 'instruction', source, position)),
      ...statements.map((text) => row(`${text} (${source} ${position})`, 'other', source, position)),
    ]),
  );
}

describe('a threshold per context (issue 45, thirteenth pass)', () => {
  it('cuts each context where its own scores part: a statement opening a message scores high, so its cut rises', () => {
    // Alone, asks score 1 and statements -1; opening a message, asks 2 and statements 1 (every source alike).
    const rows = ['a', 'b'].flatMap((source) => [
      scored(source, 'only', true, 1),
      scored(source, 'only', false, -1),
      scored(source, 'first', true, 2),
      scored(source, 'first', false, 1),
    ]);
    const { thresholds, worst } = chooseThresholds(rows);
    expect(worst).toBe(1);
    expect(thresholds.only).toBeLessThan(1);
    expect(thresholds.only).toBeGreaterThanOrEqual(-1);
    expect(thresholds.first).toBeGreaterThanOrEqual(1);
    expect(CONTEXT_THRESHOLDS).toContain(thresholds.first);
  });

  it('chooses each fold settings from the training sources alone: the held-out labels never change the choice', () => {
    const rows = tinySources();
    const folds = nestedContextThresholds(rows, 'position');
    expect(folds.map((fold) => fold.source)).toEqual(['a', 'b', 'c']);
    for (const fold of folds) expect(NESTED_BALANCES).toContain(fold.balance);
    const flipped = rows.map((r) =>
      r.source === 'a'
        ? { ...r, label: r.label === 'other' ? ('instruction' as const) : ('other' as const) }
        : r,
    );
    const [before] = folds;
    const [after] = nestedContextThresholds(flipped, 'position');
    expect({ balance: after?.balance, thresholds: after?.thresholds, inner: after?.innerWorst }).toEqual({
      balance: before?.balance,
      thresholds: before?.thresholds,
      inner: before?.innerWorst,
    });
    expect(after?.recall).not.toBe(before?.recall);
  });
});

import { describe, expect, it } from 'vitest';
import {
  FEW_INSTRUCTIONS,
  type Fold,
  formatFold,
  judgedFigures,
  readLabelled,
} from './instruction-model-folds.js';

const fold = (
  positives: number,
  precision: number | undefined,
  recall: number | undefined,
  fpr: number,
): Fold => ({
  source: 'test',
  sentences: 156,
  positives,
  precision,
  recall,
  falsePositiveRate: fpr,
});

describe('judgedFigures (issue 45, eleventh pass: sources of few instructions)', () => {
  it('holds a source of few instructions to the share of its other sentences left unflagged', () => {
    // gsm8k held out with the ninth pass's model: 3 asks, all found, 27 of 153 others flagged.
    const judged = judgedFigures(fold(3, 0.1, 1, 27 / 153));
    expect(judged.byFalsePositives).toBe(true);
    expect(judged.precision).toBeCloseTo(1 - 27 / 153, 6);
    expect(judged.recall).toBeCloseTo(1 - 27 / 153, 6);
    expect(formatFold(fold(3, 0.1, 1, 27 / 153))).toContain('judged by false positives');
  });

  it('scores a source of no instruction and nothing flagged 1, and one of enough instructions by precision and recall', () => {
    expect(judgedFigures(fold(0, undefined, undefined, 0))).toEqual({
      precision: 1,
      recall: 1,
      byFalsePositives: true,
    });
    expect(judgedFigures(fold(FEW_INSTRUCTIONS, 0.838, 0.921, 0.152))).toEqual({
      precision: 0.838,
      recall: 0.921,
      byFalsePositives: false,
    });
  });
});

describe('readLabelled with a hand-labelled set (issue 45, fourteenth pass)', () => {
  it('reads the OpenHands set as a source of its own, each row with its own material cue', () => {
    const rows = readLabelled(['openhands']).filter((row) => row.source === 'openhands');
    expect(rows).toHaveLength(146);
    expect(rows.filter((row) => row.label === 'instruction')).toHaveLength(44);
    // An observation's statement after "OBSERVATION:" stands after a colon in its message.
    const reminder = rows.find((row) => row.text.startsWith('ENVIRONMENT REMINDER: You have 13 turns'));
    expect(reminder).toMatchObject({ label: 'other', material: 'colon' });
    // The system message's opening rules stand before any colon: no cue.
    const first = rows.find((row) => row.text.startsWith('The assistant can use a Python environment'));
    expect(first?.label).toBe('instruction');
    expect(first?.material).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { encodeWeights } from '../src/core/language/instruction-model.js';
import {
  INSTRUCTION_LEXICAL_WEIGHT_SCALE,
  INSTRUCTION_LEXICAL_WEIGHTS,
  INSTRUCTION_WEIGHT_SCALE,
  INSTRUCTION_WEIGHTS,
} from '../src/core/language/instruction-weights.js';
import {
  type Fold,
  judgedFigures,
  leaveOneSourceOut,
  readLabelled,
  trainModel,
} from './instruction-model-folds.js';

/** Issue 45: precision and recall on every held-out source. */
const GOAL = 0.9;

/**
 * Issue 45's open gap: the held-out sources still under the goal, each held at what it reaches so
 * it can only improve. Empty since the fifteenth pass (eval/data/instructions/LABELS.md): with the
 * eleventh pass's features, "do" before its object read as the verb, "the assistant" read as the
 * addressee, a bare opening in the third person ("Looks like ...", "Finds all files ...") and a
 * past or perfect verb as features, oasst1-en100, arena-hard and gsm8k trained and a threshold of
 * 0.1, every held-out source meets 90/90 (`npx tsx scripts/train-instruction-model.ts --check`).
 * Before it, at the twelfth pass's model: fastchat-bench 86.1/92.1, oasst1 85.1/90.0, swe-agent 86.1/100.
 */
const OPEN_GAP: Readonly<Record<string, { precision: number; recall: number }>> = {};

describe('the instruction model (issue 45)', () => {
  const rows = readLabelled();

  it('is trained on at least 3,000 labelled sentences of at least 5 licensed sources', () => {
    expect(rows.length).toBeGreaterThanOrEqual(3000);
    const sources = new Set(rows.map((row) => row.source));
    expect(sources.size).toBeGreaterThanOrEqual(5);
    for (const row of rows)
      expect(row.license, row.text).toMatch(/^(?:MIT|Apache-2\.0|CC-BY-SA-4\.0|CDLA-Sharing-1\.0)$/);
  });

  it('ships the weights `npm run train:instructions` writes, byte for byte (deterministic training)', () => {
    const model = trainModel(rows);
    const plain = encodeWeights(model.plain);
    const lexical = encodeWeights(model.lexical);
    expect(plain.scale).toBe(INSTRUCTION_WEIGHT_SCALE);
    expect(plain.base64 === INSTRUCTION_WEIGHTS).toBe(true);
    expect(lexical.scale).toBe(INSTRUCTION_LEXICAL_WEIGHT_SCALE);
    expect(lexical.base64 === INSTRUCTION_LEXICAL_WEIGHTS).toBe(true);
  });

  it('leaving one source out: 90% on each held-out source, or no lower than the open gap recorded below', () => {
    const folds: Fold[] = leaveOneSourceOut(rows);
    expect(folds.length).toBe(new Set(rows.map((row) => row.source)).size);
    const below: string[] = [];
    for (const fold of folds) {
      // A source of few instructions is judged by its false positives (judgedFigures); chats
      // between people hold none, and the context rule flags nothing of them.
      const { precision, recall } = judgedFigures(fold);
      if (rows.some((row) => row.source === fold.source && row.context === 'person'))
        expect(fold.falsePositiveRate, `${fold.source}: said to a person, nothing is flagged`).toBe(0);
      const floor = OPEN_GAP[fold.source] ?? { precision: GOAL, recall: GOAL };
      if (precision < floor.precision || recall < floor.recall)
        below.push(
          `${fold.source}: precision ${(100 * precision).toFixed(1)}%, recall ${(100 * recall).toFixed(1)}%`,
        );
    }
    expect(below, 'held-out sources under their bar').toEqual([]);
    // The gap may only close: a source listed here that reaches the goal must leave the list.
    const closed = folds.filter((fold) => {
      if (!(fold.source in OPEN_GAP)) return false;
      return (fold.precision ?? 1) >= GOAL && (fold.recall ?? 1) >= GOAL;
    });
    expect(
      closed.map((fold) => fold.source),
      'sources now at the goal: remove them from OPEN_GAP',
    ).toEqual([]);
  });
});

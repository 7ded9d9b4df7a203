import { describe, expect, it } from 'vitest';
import { encodeWeights } from '../src/core/summary/embedded/instruction-model.js';
import {
  INSTRUCTION_WEIGHT_SCALE,
  INSTRUCTION_WEIGHTS,
} from '../src/core/summary/embedded/instruction-weights.js';
import { type Fold, leaveOneSourceOut, readLabelled, trainWeights } from './instruction-model-folds.js';

/** Issue 45: precision and recall on every held-out source; no bar lowered for any source. */
const GOAL = 0.9;

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
    const { base64, scale } = encodeWeights(trainWeights(rows));
    expect(scale).toBe(INSTRUCTION_WEIGHT_SCALE);
    expect(base64 === INSTRUCTION_WEIGHTS).toBe(true);
  }, 300_000);

  it('leaving one source out: precision and recall at least 90% on each held-out source', () => {
    const folds: Fold[] = leaveOneSourceOut(rows);
    expect(folds.length).toBe(new Set(rows.map((row) => row.source)).size);
    const below: string[] = [];
    for (const fold of folds) {
      // Chats between people hold no instruction: nothing of them may be flagged (precision of
      // nothing said is 100%).
      const precision = fold.precision ?? (fold.falsePositiveRate === 0 ? 1 : 0);
      const recall = fold.recall ?? 1;
      if (precision < GOAL || recall < GOAL)
        below.push(
          `${fold.source}: precision ${(100 * precision).toFixed(1)}%, recall ${(100 * recall).toFixed(1)}%`,
        );
    }
    expect(below, 'held-out sources under 90%').toEqual([]);
  }, 300_000);
});

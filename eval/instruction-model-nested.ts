/**
 * Nested leave-one-source-out evaluation of the instruction model (issue 45, tenth pass): for each
 * held-out source, the training settings (per-source balance) and the decision threshold are
 * chosen by a leave-one-source-out run over the training sources alone, then the model trained on
 * them with that choice is scored on the held-out source once. The held-out source is never read
 * to choose, so the table is an estimate of what choosing settings this way gives on a new
 * source (`npx tsx scripts/train-instruction-model.ts --nested`).
 */

import {
  type Fold,
  judgedFigures,
  type LabelledSentence,
  LEXICAL_TRAIN_DEFAULTS,
  scoreRows,
  TRAIN_DEFAULTS,
  trainWeights,
} from './instruction-model-folds.js';

/** The per-source balance of the plain view tried (the lexical view's is scaled alike: 0.35 -> 0.25). */
export const NESTED_BALANCES = [0.35, 0.7, 1] as const;
/** The decision thresholds tried (log-odds; the shipped model decides at 0). */
export const NESTED_THRESHOLDS = [0, 0.25, 0.5] as const;

/** One held-out source's figures, with the settings its training sources chose. */
export interface NestedFold extends Fold {
  balance: number;
  threshold: number;
  /** The choice's worst precision or recall over the inner held-out sources. */
  innerWorst: number;
}

function train(rows: LabelledSentence[], balance: number) {
  const lexicalBalance = (balance * LEXICAL_TRAIN_DEFAULTS.balance) / TRAIN_DEFAULTS.balance;
  return {
    plain: trainWeights(rows, { ...TRAIN_DEFAULTS, balance }),
    lexical: trainWeights(rows, { ...LEXICAL_TRAIN_DEFAULTS, balance: lexicalBalance }),
  };
}

/** A fold's worst figure (a source of few instructions counts by its false positives: `judgedFigures`). */
function worstOf(fold: Fold): number {
  const { precision, recall } = judgedFigures(fold);
  return Math.min(precision, recall);
}

/** The balance and threshold whose worst inner held-out figure is highest, over `rows`' sources. */
function choose(rows: LabelledSentence[]): { balance: number; threshold: number; innerWorst: number } {
  // Chats between people train nothing and the context rule flags none of them: they decide nothing.
  const sources = [...new Set(rows.filter((r) => r.context === 'assistant').map((r) => r.source))];
  let best = { balance: TRAIN_DEFAULTS.balance, threshold: 0, innerWorst: -1 };
  for (const balance of NESTED_BALANCES) {
    const worst = NESTED_THRESHOLDS.map(() => 1);
    for (const inner of sources) {
      const model = train(
        rows.filter((r) => r.source !== inner),
        balance,
      );
      const held = rows.filter((r) => r.source === inner);
      NESTED_THRESHOLDS.forEach((threshold, k) => {
        worst[k] = Math.min(worst[k] as number, worstOf(scoreRows(held, model, inner, threshold)));
      });
    }
    NESTED_THRESHOLDS.forEach((threshold, k) => {
      if ((worst[k] as number) > best.innerWorst)
        best = { balance, threshold, innerWorst: worst[k] as number };
    });
  }
  return best;
}

/**
 * One fold a source, its settings chosen on the other sources alone; `only` names the held-out
 * sources to run (each fold is independent: a long run can be split across processes).
 */
export function nestedLeaveOneSourceOut(rows: LabelledSentence[], only?: readonly string[]): NestedFold[] {
  const sources = [...new Set(rows.map((r) => r.source))].filter((s) => !only || only.includes(s));
  return sources.map((source) => {
    const training = rows.filter((r) => r.source !== source);
    const choice = choose(training);
    const model = train(training, choice.balance);
    const fold = scoreRows(
      rows.filter((r) => r.source === source),
      model,
      source,
      choice.threshold,
    );
    return { ...fold, ...choice };
  });
}

/** One held-out source's figures at one cell of the grid the nested run chooses from. */
export interface GridFold extends Fold {
  balance: number;
  threshold: number;
}

/**
 * Each held-out source scored at every balance and threshold the nested run chooses from
 * ({@link NESTED_BALANCES} x {@link NESTED_THRESHOLDS}; one training a balance): whatever its
 * training sources choose, a source's nested figures are one of these cells, so the worst cell
 * bounds them from below at a tenth of the nested run's cost (`--grid`). `balances` runs a part of
 * the grid (a long run splits across processes).
 */
export function gridLeaveOneSourceOut(
  rows: LabelledSentence[],
  only?: readonly string[],
  balances: readonly number[] = NESTED_BALANCES,
): GridFold[] {
  const sources = [...new Set(rows.map((r) => r.source))].filter((s) => !only || only.includes(s));
  return sources.flatMap((source) => {
    const held = rows.filter((r) => r.source === source);
    return balances.flatMap((balance) => {
      const model = train(
        rows.filter((r) => r.source !== source),
        balance,
      );
      return NESTED_THRESHOLDS.map((threshold) => ({
        ...scoreRows(held, model, source, threshold),
        balance,
        threshold,
      }));
    });
  });
}

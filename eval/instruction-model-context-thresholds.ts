/**
 * A decision threshold per context (issue 45, thirteenth pass): the instruction model's log-odds
 * cut apart for each place a sentence stands in its message (its `position`, or its position with
 * the `later` cue), chosen by leaving one source out. Two uses, both through
 * `npx tsx scripts/train-instruction-model.ts`:
 *
 * - `--nested-context position|position-later`: for each held-out source, the per-source balance
 *   and the thresholds are chosen on the training sources alone (each training source scored by a
 *   model trained on the others), then the model trained with that balance is scored on the
 *   held-out source once, with those thresholds. The held-out labels never reach the choice.
 * - `--oracle-context position|position-later`: an upper bound, not an estimate. The thresholds
 *   are chosen on the held-out scores of every source at once (the shipped training): if even
 *   this choice leaves a source under 90/90, no threshold per context brings it there.
 */

import { instructionScore, isDataLine } from '../src/core/language/instruction-model.js';
import {
  countFold,
  type Fold,
  judgedFigures,
  type LabelledSentence,
  LEXICAL_TRAIN_DEFAULTS,
  TRAIN_DEFAULTS,
  trainWeights,
} from './instruction-model-folds.js';
import { NESTED_BALANCES } from './instruction-model-nested.js';

/** How a row's context is read: its position alone, or its position with the later cue. */
export type ContextKey = 'position' | 'position-later';
export const CONTEXT_KEYS: readonly ContextKey[] = ['position', 'position-later'];
/** The thresholds tried for each context (log-odds; the shipped model decides at 0). */
export const CONTEXT_THRESHOLDS = [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5] as const;

/** A row with the score of a model that never saw its source (rows the rules decide score -Infinity). */
export interface ScoredRow {
  source: string;
  context: string;
  truth: boolean;
  score: number;
}
export type Thresholds = Record<string, number>;

/** The row's context under `key`. */
export function contextOf(row: LabelledSentence, key: ContextKey): string {
  return key === 'position' ? row.position : `${row.position}/${row.later}`;
}

function train(rows: LabelledSentence[], balance: number) {
  const lexicalBalance = (balance * LEXICAL_TRAIN_DEFAULTS.balance) / TRAIN_DEFAULTS.balance;
  return {
    plain: trainWeights(rows, { ...TRAIN_DEFAULTS, balance }),
    lexical: trainWeights(rows, { ...LEXICAL_TRAIN_DEFAULTS, balance: lexicalBalance }),
  };
}

/** `rows` scored by `model`; a row said to a person, quoted or a line of data is never flagged (the rules of `isInstructionBy`). */
function scoreAll(
  rows: readonly LabelledSentence[],
  model: ReturnType<typeof train>,
  key: ContextKey,
): ScoredRow[] {
  return rows.map((row) => ({
    source: row.source,
    context: contextOf(row, key),
    truth: row.label === 'instruction',
    score:
      row.context === 'person' || row.material === 'quote' || isDataLine(row.text)
        ? Number.NEGATIVE_INFINITY
        : instructionScore(row.text, row.context, model, row.position, row.later),
  }));
}

/** Each row of `rows` scored by a model trained on every other source at `balance`. */
export function outOfFoldScores(
  rows: readonly LabelledSentence[],
  key: ContextKey,
  balance: number,
): ScoredRow[] {
  const sources = [...new Set(rows.map((r) => r.source))];
  return sources.flatMap((source) =>
    scoreAll(
      rows.filter((r) => r.source === source),
      train(
        rows.filter((r) => r.source !== source),
        balance,
      ),
      key,
    ),
  );
}

/** The fold of one source's scored rows cut at `thresholds` (a context not named cuts at 0). */
export function foldOf(rows: readonly ScoredRow[], source: string, thresholds: Thresholds): Fold {
  return countFold(
    rows,
    source,
    (row) => row.score > (thresholds[row.context] ?? 0),
    (row) => row.truth,
  );
}

/** The worst judged figure over the sources, and their mean (a tie-break). */
function objective(bySource: ReadonlyMap<string, ScoredRow[]>, thresholds: Thresholds): [number, number] {
  let worst = 1;
  let sum = 0;
  for (const [source, rows] of bySource) {
    const { precision, recall } = judgedFigures(foldOf(rows, source, thresholds));
    worst = Math.min(worst, precision, recall);
    sum += precision + recall;
  }
  return [worst, sum / (2 * bySource.size)];
}

const better = (a: [number, number], b: [number, number]) =>
  a[0] > b[0] + 1e-12 || (a[0] > b[0] - 1e-12 && a[1] > b[1] + 1e-12);

/**
 * The thresholds, one a context, that maximise the worst judged figure over the sources of
 * `scored` (then the mean): coordinate ascent over {@link CONTEXT_THRESHOLDS} from 0 everywhere,
 * three sweeps.
 */
export function chooseThresholds(scored: readonly ScoredRow[]): { thresholds: Thresholds; worst: number } {
  const bySource = new Map<string, ScoredRow[]>();
  for (const row of scored) bySource.set(row.source, [...(bySource.get(row.source) ?? []), row]);
  // A source the rules decide whole (a chat between people: every row said to a person) no cut changes.
  for (const [source, rows] of bySource)
    if (rows.every((r) => r.score === Number.NEGATIVE_INFINITY)) bySource.delete(source);
  const contexts = [...new Set(scored.map((r) => r.context))].sort();
  const thresholds: Thresholds = Object.fromEntries(contexts.map((c) => [c, 0]));
  let best = objective(bySource, thresholds);
  for (let sweep = 0; sweep < 3; sweep++)
    for (const context of contexts)
      for (const cut of CONTEXT_THRESHOLDS) {
        const tried = { ...thresholds, [context]: cut };
        const value = objective(bySource, tried);
        if (better(value, best)) {
          best = value;
          thresholds[context] = cut;
        }
      }
  return { thresholds, worst: best[0] };
}

/** One held-out source's figures with the balance and thresholds its training sources chose. */
export interface ContextFold extends Fold {
  balance: number;
  thresholds: Thresholds;
  innerWorst: number;
}

/** Nested leave-one-source-out with a threshold per context (see the file's comment). */
export function nestedContextThresholds(rows: readonly LabelledSentence[], key: ContextKey): ContextFold[] {
  const sources = [...new Set(rows.map((r) => r.source))];
  return sources.map((source) => {
    const training = rows.filter((r) => r.source !== source);
    let choice = { balance: TRAIN_DEFAULTS.balance, thresholds: {} as Thresholds, worst: -1 };
    for (const balance of NESTED_BALANCES) {
      const chosen = chooseThresholds(outOfFoldScores(training, key, balance));
      if (chosen.worst > choice.worst) choice = { balance, ...chosen };
    }
    const held = scoreAll(
      rows.filter((r) => r.source === source),
      train(training, choice.balance),
      key,
    );
    return {
      ...foldOf(held, source, choice.thresholds),
      balance: choice.balance,
      thresholds: choice.thresholds,
      innerWorst: choice.worst,
    };
  });
}

/** The upper bound: thresholds chosen on every source's held-out scores at the shipped balance. */
export function oracleContextThresholds(
  rows: readonly LabelledSentence[],
  key: ContextKey,
): { thresholds: Thresholds; folds: Fold[] } {
  const scored = outOfFoldScores(rows, key, TRAIN_DEFAULTS.balance);
  const { thresholds } = chooseThresholds(scored);
  const sources = [...new Set(rows.map((r) => r.source))];
  return {
    thresholds,
    folds: sources.map((source) =>
      foldOf(
        scored.filter((r) => r.source === source),
        source,
        thresholds,
      ),
    ),
  };
}

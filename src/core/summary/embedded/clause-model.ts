/**
 * A small learned model of "this clause of a chat between people holds the answer to a later
 * question": a logistic regression over the dense features of clause-features.ts, trained by
 * eval/train-clause-model.ts (`npm run train:clauses`) on the LoCoMo tuning conversations
 * (eval/data/locomo, CC BY-NC 4.0), its weights shipped in clause-weights.ts. Deterministic,
 * nothing downloaded; no weights means the hand-weighted value stays.
 */

import { CLAUSE_FEATURE_NAMES } from './clause-features.js';
import { CLAUSE_WEIGHTS } from './clause-weights.js';

/** The shipped weights, or undefined when none are shipped (or their length is stale). */
export function shippedClauseModel(): readonly number[] | undefined {
  return CLAUSE_WEIGHTS.length === CLAUSE_FEATURE_NAMES.length ? CLAUSE_WEIGHTS : undefined;
}

/** The model's probability that a clause with `features` holds a later question's answer. */
export function clauseProbability(features: readonly number[], weights: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < features.length; i++) z += (weights[i] ?? 0) * features[i]!;
  return 1 / (1 + Math.exp(-z));
}

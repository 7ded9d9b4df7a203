/**
 * Trains the built-in summarizer's clause model (issue 45, point 3: what a later question asks
 * about, learned): a logistic regression over the dense features of
 * src/core/summary/embedded/clause-features.ts, on the LoCoMo TUNING conversations only
 * (eval/data/locomo, CC BY-NC 4.0, see its LICENSE and README; the held-out ones are never
 * read here). A clause is positive when it holds a short answer by the evidence rule of
 * real-chat-facts.ts (the answer's words in one clause of one of its evidence turns), as
 * real-chat-ranks.ts marks them. Full-batch gradient descent, fixed steps, no randomness: the
 * same data gives the same weights. Prints, for each tuning conversation left out in turn,
 * the share of answer clauses among the best clauses (by probability per token) that fit 1/16
 * of the chat, for the hand-weighted value and the model trained on the other conversations,
 * then the weights trained on all of them. Not shipped: in the rolling summarizer the model did
 * not carry over to the held-out conversations (bench/notes/issue-45-real-chat-candidates.md,
 * section 8; the hook into scoring is on branch issue-45ah's commit 0d582e9).
 *
 * `npx tsx eval/train-clause-model.ts [--drop 'asked before,asked after,recency'] [--l2 X]
 * [--steps N] [--measure held-out] [--out weights.json]` (`--drop` zeroes features, `--measure`
 * prints the same share on another set with the weights trained on all tuning conversations,
 * `--out` writes the weights as JSON).
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Unit } from '../src/core/summary/embedded/types.js';
import { CLAUSE_FEATURE_NAMES, clauseFeatures, clauseProbability } from './clause-features.js';
import { clauseInputs } from './clause-inputs.js';
import { LOCOMO_SETS, loadRealChat, type RealChat } from './real-chat-facts.js';
import { answerHolders, scoredUnits, type TurnUnit } from './real-chat-ranks.js';

/** One conversation's clauses: features, labels, the hand value, the room. */
export interface ClauseSet {
  id: string;
  units: TurnUnit[];
  features: number[][];
  labels: number[];
  hand: number[];
  room: number;
}

/** The clauses of a chat holding one of its short answers (evidence rule). */
export function answerClauses(chat: RealChat, units: readonly TurnUnit[]): Set<Unit> {
  return new Set<Unit>(answerHolders(chat, units).flat());
}

/** Reads one conversation's clauses with their features (scored by the hand value). */
export function clauseSet(id: string): ClauseSet {
  const chat = loadRealChat(id);
  const units = scoredUnits(chat);
  const inputs = clauseInputs(units);
  const byUnit = new Map<Unit, number[]>(units.map((u, i) => [u, clauseFeatures(inputs[i]!)]));
  const kept = units.filter((u) => u.value > 0);
  const holding = answerClauses(chat, kept);
  return {
    id,
    units: kept,
    features: kept.map((u) => byUnit.get(u)!),
    labels: kept.map((u) => (holding.has(u) ? 1 : 0)),
    hand: kept.map((u) => u.value),
    room: chat.messages.reduce((n, m) => n + String(m.content).length, 0) / 16,
  };
}

/**
 * Logistic regression by Newton's method (iteratively reweighted least squares; L2 on all but
 * the bias): `steps` iterations, exact arithmetic order, no randomness.
 */
export function trainClauseModel(sets: readonly ClauseSet[], l2 = 1e-3, steps = 25): number[] {
  const d = CLAUSE_FEATURE_NAMES.length;
  const w = new Array<number>(d).fill(0);
  const rows: number[][] = [];
  const ys: number[] = [];
  for (const set of sets) {
    rows.push(...set.features);
    ys.push(...set.labels);
  }
  const n = rows.length;
  for (let step = 0; step < steps; step++) {
    const grad = new Array<number>(d).fill(0);
    const hess = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (let i = 0; i < n; i++) {
      const x = rows[i]!;
      const p = clauseProbability(x, w);
      const err = p - ys[i]!;
      const s = p * (1 - p);
      for (let j = 0; j < d; j++) {
        grad[j]! += err * x[j]!;
        const row = hess[j]!;
        for (let k = 0; k < d; k++) row[k]! += s * x[j]! * x[k]!;
      }
    }
    for (let j = 0; j < d; j++) {
      grad[j] = grad[j]! / n + (j === 0 ? 0 : l2 * w[j]!);
      for (let k = 0; k < d; k++)
        hess[j]![k] = hess[j]![k]! / n + (j === k && j > 0 ? l2 : 0) + (j === k ? 1e-9 : 0);
    }
    const delta = solve(hess, grad);
    for (let j = 0; j < d; j++) w[j]! -= delta[j]!;
  }
  return w.map((x) => Number(x.toPrecision(6)));
}

/** Solves `a x = b` by Gaussian elimination with partial pivoting (a small dense system). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    const p = m[c]![c]! || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / p;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / (row[i]! || 1e-12));
}

/** Answer clauses among the best by value per token that fit the room, and how many fit. */
export function topShare(set: ClauseSet, values: readonly number[]): { top: number; answers: number } {
  const cost = (i: number) => set.units[i]!.text.length / 4 + 2;
  const order = set.units
    .map((_, i) => i)
    .sort((a, b) => values[b]! / cost(b) - values[a]! / cost(a) || a - b);
  let used = 0;
  let top = 0;
  let answers = 0;
  for (const i of order) {
    used += set.units[i]!.text.length + 12;
    if (used > set.room) break;
    top++;
    answers += set.labels[i]!;
  }
  return { top, answers };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: '' },
      l2: { type: 'string', default: '0.001' },
      steps: { type: 'string', default: '25' },
      drop: { type: 'string', default: '' },
      measure: { type: 'string', default: '' },
    },
  });
  const l2 = Number(values.l2);
  const steps = Number(values.steps);
  // Features left out (zeroed, so their weights are 0): `--drop 'asked before,recency'`.
  const drop = new Set(values.drop.split(',').filter(Boolean));
  const dropped = CLAUSE_FEATURE_NAMES.flatMap((name, i) => (drop.has(name) ? [i] : []));
  if (dropped.length !== drop.size)
    throw new Error(`--drop names features of ${CLAUSE_FEATURE_NAMES.join(', ')}`);
  const sets = LOCOMO_SETS.tune.map(clauseSet);
  for (const set of sets) for (const f of set.features) for (const i of dropped) f[i] = 0;
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
  let handTop = 0;
  let handAnswers = 0;
  let modelTop = 0;
  let modelAnswers = 0;
  for (const left of sets) {
    const w = trainClauseModel(
      sets.filter((s) => s !== left),
      l2,
      steps,
    );
    const hand = topShare(left, left.hand);
    const model = topShare(
      left,
      left.features.map((f) => clauseProbability(f, w)),
    );
    handTop += hand.top;
    handAnswers += hand.answers;
    modelTop += model.top;
    modelAnswers += model.answers;
    const positives = left.labels.reduce((a, b) => a + b, 0);
    console.log(
      `locomo-${left.id} left out: ${left.units.length} clauses, ${positives} hold an answer; best that fit 1/16: hand ${pct(hand.answers, hand.top)} of ${hand.top}, model ${pct(model.answers, model.top)} of ${model.top}`,
    );
  }
  console.log(
    `tune, each conversation left out (l2 ${l2}, ${steps} Newton steps): answer clauses among the best that fit 1/16: hand ${handAnswers} of ${handTop} (${pct(handAnswers, handTop)}), model ${modelAnswers} of ${modelTop} (${pct(modelAnswers, modelTop)})`,
  );
  const w = trainClauseModel(sets, l2, steps);
  if (values.measure) {
    // The rank proxy on another set with the weights trained on all tuning conversations.
    let hand = { top: 0, answers: 0 };
    let model = { top: 0, answers: 0 };
    for (const id of LOCOMO_SETS[values.measure as keyof typeof LOCOMO_SETS]) {
      const set = clauseSet(id);
      for (const f of set.features) for (const i of dropped) f[i] = 0;
      const h = topShare(set, set.hand);
      const m = topShare(
        set,
        set.features.map((f) => clauseProbability(f, w)),
      );
      hand = { top: hand.top + h.top, answers: hand.answers + h.answers };
      model = { top: model.top + m.top, answers: model.answers + m.answers };
    }
    console.log(
      `${values.measure}: answer clauses among the best that fit 1/16: hand ${hand.answers} of ${hand.top} (${pct(hand.answers, hand.top)}), model ${model.answers} of ${model.top} (${pct(model.answers, model.top)})`,
    );
    return;
  }
  for (const [i, name] of CLAUSE_FEATURE_NAMES.entries()) console.log(`${name.padEnd(24)} ${w[i]}`);
  if (!values.out) return;
  writeFileSync(values.out, `${JSON.stringify(w)}\n`);
  console.log(`wrote ${values.out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();

/**
 * Fits the built-in summarizer's fact model (`FACT_WEIGHTS` of
 * src/core/summary/embedded/score-units.ts) on the LoCoMo tuning conversations only (the
 * held-out ones stay unseen): every clause of every turn, cut as the summarizer cuts a chat and
 * read with its relative dates resolved, is labelled 1 when it holds a short answer of the
 * dataset's QA said in that turn (the measure of eval/real-chat-facts.ts), else 0. A logistic
 * regression on `factFeatures` (standardized, gradient descent, L2), printed in raw units to
 * paste into `FACT_WEIGHTS`. Deterministic.
 *
 * Also prints a proxy of what the weights buy, per tuning conversation left out of the fit:
 * the short answers held by the clauses a greedy choice by value per token keeps in 900 tokens
 * (no rolling, no layout), against the current weights.
 *
 * `npx tsx eval/fit-fact-odds.ts`
 */
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { annotateRelativeDate } from '../src/core/summary/embedded/relative-dates.js';
import {
  FACT_FEATURES,
  FACT_WEIGHTS,
  factFeatures,
  factOdds,
} from '../src/core/summary/embedded/score-units.js';
import { textUnits } from '../src/core/summary/embedded/units.js';
import { heldAt, LOCOMO_SETS, loadRealChat, readLine, turnSequence } from './real-chat-facts.js';

/** One clause of a tuning chat: its features, its cost, and the answers it holds. */
interface Row {
  chat: string;
  text: string;
  words: string[];
  features: number[];
  cost: number;
  answers: string[];
}

const STAMP = /^\d{1,2}:\d{2} [ap]m on [^\n]*\n/;
const SPEAKER = /^[A-Z][\w.'’-]{0,20}: /;

/** The clauses of one conversation, labelled. */
function rowsOf(id: string, count: (text: string) => number): Row[] {
  const chat = loadRealChat(id);
  const answers = chat.answers
    .map((a, k) => ({
      key: `${id}:${k}`,
      answer: a.answer,
      turns: new Set(a.evidence),
      sequences: a.evidence.map((turn) => turnSequence(chat, turn)),
      evidence: a.evidence,
    }))
    .filter((a) =>
      heldAt(
        a.answer,
        a.evidence.map((turn) =>
          readLine(annotateRelativeDate(String(turn.content), chat.dates.get(turn)), turn),
        ),
        a.turns,
        a.sequences,
      ),
    );
  const rows: Row[] = [];
  for (const message of chat.messages) {
    const body = String(message.content).replace(STAMP, '').replace(SPEAKER, '');
    for (const unit of textUnits(body, true)) {
      const text = annotateRelativeDate(unit.text, chat.dates.get(message));
      const line = [readLine(text)];
      rows.push({
        chat: id,
        text,
        words: unit.words,
        features: factFeatures(text, unit.words),
        cost: count(text) + 6,
        answers: answers.filter((a) => heldAt(a.answer, line, a.turns, a.sequences)).map((a) => a.key),
      });
    }
  }
  return rows;
}

/** Logistic regression by gradient descent on standardized features; weights in raw units. */
function fitWeights(rows: readonly Row[], epochs = 400, rate = 1, l2 = 0.01): number[] {
  const n = FACT_FEATURES.length;
  const mean = new Array<number>(n).fill(0);
  const sd = new Array<number>(n).fill(0);
  for (const row of rows) for (let j = 1; j < n; j++) mean[j]! += row.features[j]! / rows.length;
  for (const row of rows)
    for (let j = 1; j < n; j++) sd[j]! += (row.features[j]! - mean[j]!) ** 2 / rows.length;
  for (let j = 1; j < n; j++) sd[j] = Math.sqrt(sd[j]!) || 1;
  const x = rows.map((row) => row.features.map((v, j) => (j === 0 ? 1 : (v - mean[j]!) / sd[j]!)));
  const y = rows.map((row) => (row.answers.length > 0 ? 1 : 0));
  const w = new Array<number>(n).fill(0);
  for (let epoch = 0; epoch < epochs; epoch++) {
    const grad = new Array<number>(n).fill(0);
    x.forEach((xi, i) => {
      let z = 0;
      for (let j = 0; j < n; j++) z += xi[j]! * w[j]!;
      const error = 1 / (1 + Math.exp(-z)) - y[i]!;
      for (let j = 0; j < n; j++) grad[j]! += (error * xi[j]!) / x.length;
    });
    for (let j = 0; j < n; j++) w[j]! -= rate * (grad[j]! + l2 * w[j]!);
  }
  const raw = w.map((v, j) => (j === 0 ? v : v / sd[j]!));
  raw[0] = w[0]! - w.slice(1).reduce((sum, v, k) => sum + (v * mean[k + 1]!) / sd[k + 1]!, 0);
  return raw;
}

/** Answers held by the clauses chosen greedily by odds per token within `budget` tokens. */
function proxy(rows: readonly Row[], weights: readonly number[], budget = 900): number {
  const ranked = rows
    .map((row) => ({ row, ratio: factOdds(row.text, row.words, weights) / row.cost }))
    .sort((a, b) => b.ratio - a.ratio);
  const held = new Set<string>();
  let used = 0;
  for (const { row } of ranked) {
    if (used + row.cost > budget) continue;
    used += row.cost;
    for (const key of row.answers) held.add(key);
  }
  return held.size;
}

function main(): void {
  const counter = tokenCounterFor('gpt-4o');
  const rows = LOCOMO_SETS.tune.flatMap((id) => rowsOf(id, (text) => counter.countText(text)));
  const weights = fitWeights(rows);
  const positives = rows.filter((row) => row.answers.length > 0).length;
  console.log(
    `${rows.length} clauses of ${LOCOMO_SETS.tune.length} tuning conversations, ${positives} hold an answer`,
  );
  for (const [j, name] of FACT_FEATURES.entries())
    console.log(`${name.padEnd(24)} ${weights[j]!.toFixed(3)}`);
  console.log(`FACT_WEIGHTS = [${weights.map((v) => v.toFixed(3)).join(', ')}]`);
  let fitted = 0;
  let current = 0;
  for (const id of LOCOMO_SETS.tune) {
    const own = rows.filter((row) => row.chat === id);
    fitted += proxy(own, fitWeights(rows.filter((row) => row.chat !== id)));
    current += proxy(own, FACT_WEIGHTS);
  }
  console.log(
    `proxy (900 tokens per conversation, each left out of its fit): ${fitted} answers; current weights ${current}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();

/**
 * How well the built-in summarizer's value ranks the clauses that hold a short answer of
 * `real-chat-facts.ts` (issue 45, point 3), with no rolling: every turn of a conversation cut
 * into clauses as the summarizer cuts them (relative dates resolved), scored at once as a
 * chat between people, and each clause marked when it holds an answer by the evidence rule of
 * the figures. Prints the area under the ROC curve of value per token (answer clauses against
 * the rest) and the share of answer clauses among the best clauses that fit 1/16 of the
 * chat's characters (about the summary's room at 1/8), and the answers an oracle fits in that
 * room (each answer's shortest holding clause, shortest first): the most any choice of
 * clauses could keep.
 *
 * `npx tsx eval/real-chat-ranks.ts [--set tune|held-out]`
 */
import { parseArgs } from 'node:util';
import { annotateRelativeDate } from '../src/core/summary/embedded/relative-dates.js';
import { scoreUnits } from '../src/core/summary/embedded/score-units.js';
import type { Unit } from '../src/core/summary/embedded/types.js';
import { textUnits } from '../src/core/summary/embedded/units.js';
import {
  heldAt,
  LOCOMO_SETS,
  loadRealChat,
  type RealChat,
  readLine,
  turnSequence,
} from './real-chat-facts.js';

export type TurnUnit = Unit & { turn: Record<string, unknown> };

/** Every clause of the chat as a unit of the people path, scored. */
export function scoredUnits(chat: RealChat): TurnUnit[] {
  const units: TurnUnit[] = [];
  chat.messages.forEach((turn, index) => {
    const body = String(turn.content).replace(/^[^\n]*\n(?=\w+: )/, '');
    const colon = body.indexOf(': ');
    const speaker = body.slice(0, colon);
    let k = 0;
    for (const unit of textUnits(body.slice(colon + 2), true))
      units.push({
        text: annotateRelativeDate(unit.text, chat.dates.get(turn)),
        words: unit.words,
        speaker,
        source: 'user',
        segment: 0,
        order: index * 1000 + k++,
        value: 0,
        turn,
      });
  });
  scoreUnits(units, { agentic: false, people: true });
  return units;
}

/**
 * For each short answer of the chat, in order, the units holding it by the evidence rule of
 * the figures (a clause of one of its evidence turns, read as a summary line).
 */
export function answerHolders(chat: RealChat, units: readonly TurnUnit[]): TurnUnit[][] {
  return chat.answers.map(({ answer, evidence }) => {
    const turns = new Set(evidence);
    const sequences = evidence.map((turn) => turnSequence(chat, turn));
    return units.filter(
      (unit) =>
        turns.has(unit.turn) &&
        heldAt(answer, [readLine(`- ${unit.speaker}: ${unit.text}`)], turns, sequences),
    );
  });
}

function main(): void {
  const { values } = parseArgs({ options: { set: { type: 'string', default: 'tune' } } });
  const ids = LOCOMO_SETS[values.set as keyof typeof LOCOMO_SETS];
  if (!ids) throw new Error(`--set takes tune or held-out, got ${values.set}`);
  let pairs = 0;
  let wins = 0;
  let top = 0;
  let topAnswers = 0;
  let all = 0;
  let answers = 0;
  let oracle = 0;
  let answerable = 0;
  for (const id of ids) {
    const chat = loadRealChat(id);
    const units = scoredUnits(chat);
    const holders = answerHolders(chat, units);
    const holding = new Set<Unit>(holders.flat());
    const cheapest = holders
      .filter((held) => held.length > 0)
      .map((held) => Math.min(...held.map((unit) => unit.text.length + 12)));
    const perToken = (unit: Unit) => unit.value / (unit.text.length / 4 + 2);
    const room = chat.messages.reduce((n, m) => n + String(m.content).length, 0) / 16;
    let used = 0;
    for (const unit of [...units].sort((a, b) => perToken(b) - perToken(a))) {
      used += unit.text.length + 12;
      if (used > room) break;
      top++;
      if (holding.has(unit)) topAnswers++;
    }
    // The oracle: each answer's shortest clause, shortest first, while they fit the same room.
    let oracleUsed = 0;
    for (const c of cheapest.sort((a, b) => a - b)) {
      if (oracleUsed + c > room) break;
      oracleUsed += c;
      oracle++;
    }
    answerable += cheapest.length;
    all += units.length;
    answers += holding.size;
    const rest = units.filter((u) => !holding.has(u)).map(perToken);
    for (const unit of holding) {
      const p = perToken(unit);
      for (const n of rest) wins += p > n ? 1 : p === n ? 0.5 : 0;
      pairs += rest.length;
    }
  }
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
  console.log(
    `${values.set}: ${all} clauses, ${answers} hold an answer (${pct(answers, all)}); AUC of value per token ${(wins / Math.max(1, pairs)).toFixed(3)}; best clauses fitting 1/16 of the chat: ${top}, ${topAnswers} hold an answer (${pct(topAnswers, top)}); an oracle choosing each answer's shortest clause fits ${oracle} of the ${answerable} answers one clause holds (${pct(oracle, answerable)}) in that room`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();

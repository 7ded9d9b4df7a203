/**
 * Where the short answers of `real-chat-facts.ts` are lost (issue 45, point 3): each
 * conversation compacted rolling at 1/`ratio` with the default policy, every summary it
 * writes recorded, and each answer the last request misses sorted by what happened to it:
 *
 * - pushed out: a summary held it (the evidence rule of the figures), a later one did not;
 *   squeezed when the summary that dropped it is shorter (in characters) than the one before;
 * - never chosen: one clause of an evidence turn (as the summarizer cuts it) holds it, no
 *   summary ever did;
 * - split: no single clause of its evidence turns holds every word of it (the clause cut
 *   parted them, the cleaning dropped one, or a clause of three words or fewer shares no run
 *   of four with its turn once its line's speaker name is read before it: "- Nate: this is
 *   Max!").
 *
 * `npx tsx eval/real-chat-misses.ts [--set tune|held-out] [--ratio 8] [--list]`
 */
import { parseArgs } from 'node:util';
import { annotateRelativeDate } from '../src/core/summary/embedded/relative-dates.js';
import { textUnits } from '../src/core/summary/embedded/units.js';
import {
  heldAt,
  LOCOMO_SETS,
  loadRealChat,
  type ReadLine,
  type RealChat,
  readLine,
  turnSequence,
} from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';

interface Tally {
  ceiling: number;
  kept: number;
  pushedOut: number;
  pushedOutSqueezed: number;
  neverChosen: number;
  split: number;
}

const STAMP = /^\d{1,2}:\d{2} [ap]m on \d{1,2} [A-Za-z]+,? \d{4}$/;

/** A turn's lines as the figures read them: relative dates resolved, the session's stamp left out. */
export function turnLines(chat: RealChat, turn: Record<string, unknown>): ReadLine[] {
  return annotateRelativeDate(String(turn.content), chat.dates.get(turn))
    .split('\n')
    .filter((line) => !STAMP.test(line))
    .map((line) => readLine(line, turn));
}

export const summaryLines = (text: string): ReadLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => readLine(line));

/** The clauses of a turn as the summarizer cuts them, each as a summary line would read. */
export function clauseLines(content: string, date: Date | undefined): ReadLine[] {
  const body = content.replace(/^[^\n]*\n(?=\w+: )/, '');
  const colon = body.indexOf(': ');
  const speaker = body.slice(0, colon);
  return textUnits(body.slice(colon + 2), true).map((unit) =>
    readLine(`- ${speaker}: ${annotateRelativeDate(unit.text, date)}`),
  );
}

async function misses(id: string, ratio: number, list: boolean): Promise<Tally> {
  const chat = loadRealChat(id);
  const summaries: { lines: ReadLine[]; chars: number; at: number }[] = [];
  const { last } = await rollRealChat(chat, ratio, {
    onSummary: (text, fed) => summaries.push({ lines: summaryLines(text), chars: text.length, at: fed }),
  });
  const byContent = new Set(chat.messages.map((m) => m.content));
  const request = last.messages as Record<string, unknown>[];
  const requestLines = [
    ...request.filter((m) => byContent.has(m.content)).flatMap((m) => turnLines(chat, m)),
    ...summaryLines(last.summary?.text ?? ''),
  ];
  const tally: Tally = { ceiling: 0, kept: 0, pushedOut: 0, pushedOutSqueezed: 0, neverChosen: 0, split: 0 };
  for (const { question, answer, evidence } of chat.answers) {
    const turns = new Set(evidence);
    const sequences = evidence.map((turn) => turnSequence(chat, turn));
    // The denominator of the figures: the answer in a line of its own turns (a session's stamp is no line).
    const own = evidence.flatMap((m) => turnLines(chat, m));
    if (!heldAt(answer, own, turns, sequences)) continue;
    tally.ceiling++;
    if (heldAt(answer, requestLines, turns, sequences)) {
      tally.kept++;
      continue;
    }
    const heldIn = summaries.map((s) => heldAt(answer, s.lines, turns, sequences));
    const lastHeld = heldIn.lastIndexOf(true);
    let kind: string;
    if (lastHeld >= 0) {
      tally.pushedOut++;
      const drop = summaries[lastHeld + 1];
      const squeezed = drop !== undefined && drop.chars < summaries[lastHeld]!.chars;
      if (squeezed) tally.pushedOutSqueezed++;
      kind = `pushed out at message ${drop?.at ?? '?'} (held ${heldIn.filter(Boolean).length} rounds${squeezed ? ', squeezed' : ''})`;
    } else {
      const clauses = evidence.flatMap((m) => clauseLines(String(m.content), chat.dates.get(m)));
      if (heldAt(answer, clauses, turns, sequences)) {
        tally.neverChosen++;
        kind = 'never chosen';
      } else {
        tally.split++;
        kind = 'split';
      }
    }
    if (list)
      console.log(
        `${chat.name} ${kind}: ${question} -> ${answer} | ${evidence.map((m) => String(m.content).slice(0, 160)).join(' / ')}`,
      );
  }
  return tally;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'held-out' },
      ratio: { type: 'string', default: '8' },
      list: { type: 'boolean', default: false },
    },
  });
  const ids = LOCOMO_SETS[values.set as keyof typeof LOCOMO_SETS];
  if (!ids) throw new Error(`--set takes tune or held-out, got ${values.set}`);
  const total: Tally = { ceiling: 0, kept: 0, pushedOut: 0, pushedOutSqueezed: 0, neverChosen: 0, split: 0 };
  for (const id of ids) {
    const t = await misses(id, Number(values.ratio), values.list);
    for (const key of Object.keys(total) as (keyof Tally)[]) total[key] += t[key];
  }
  const missed = total.ceiling - total.kept;
  const pct = (n: number) => `${((100 * n) / Math.max(1, missed)).toFixed(1)}%`;
  console.log(
    `${values.set} at 1/${values.ratio}: ${total.kept} of ${total.ceiling} kept; of ${missed} missed: pushed out ${total.pushedOut} (${pct(total.pushedOut)}; ${total.pushedOutSqueezed} by a smaller summary), never chosen ${total.neverChosen} (${pct(total.neverChosen)}), split by the clause cut ${total.split} (${pct(total.split)})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

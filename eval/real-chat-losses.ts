/**
 * Where the request's short answers come from, and where the missed ones were lost, against a
 * same-size sliding window (issue 45, point 3). Each conversation compacted rolling at
 * 1/`ratio` with the default policy; every answer of the figures' denominator (see
 * `real-chat-facts.ts`) sorted into:
 *
 * - verbatim: a raw turn of the last request holds it (the recent turns kept whole);
 * - summary: only the last summary holds it;
 * - missed, by what happened to it: pushed out (a summary held it, a later one did not;
 *   after how many rounds), never chosen (one clause of its evidence turns holds it; no
 *   summary ever did: a clause has one chance, the compaction that folds its turn), split (no
 *   one clause holds it).
 *
 * And, for the multiple: how many the window holds, how many of those the request holds too,
 * and where the evidence sits in the chat (its token position from the end, in windows: 0 is
 * the last window's worth of the chat, the only one a sliding window can hold).
 *
 * `npx tsx eval/real-chat-losses.ts [--set tune|held-out] [--ratio 8]`
 */
import { parseArgs } from 'node:util';
import { CompactManager } from '../src/core/manager/compact-manager.js';
import { slidingWindow } from './context-measures.js';
import {
  heldAt,
  LOCOMO_SETS,
  loadRealChat,
  type ReadLine,
  readLine,
  turnSequence,
} from './real-chat-facts.js';
import { clauseLines, summaryLines, turnLines } from './real-chat-misses.js';
import { rollRealChat } from './roll-real-chat.js';

const KINDS = ['verbatim', 'summary', 'pushed', 'never', 'split'] as const;
type Kind = (typeof KINDS)[number];

/** One conversation's tally: per kind, the answers; the window's; the evidence's age in windows. */
export interface LossTally {
  name: string;
  ceiling: number;
  kinds: Record<Kind, number>;
  window: number;
  /** Window holds it, the request does not: by kind of loss. */
  windowOnly: Record<Kind, number>;
  /** Answers by the age of their latest evidence turn, in windows (0, 1, 2-3, 4+), and kept of them. */
  byAge: { total: number[]; kept: number[] };
  /** Rounds a pushed-out answer was held, summed (mean = pushedRounds / kinds.pushed). */
  pushedRounds: number;
  /** Summary lines (distinct texts) ever written / holding an answer, and their rounds held. */
  lines: { ever: number; answer: number; roundsAll: number; roundsAnswer: number };
  /** The same for the last summary's lines. */
  lastLines: { all: number; answer: number };
}

const ageBucket = (windows: number) => (windows < 1 ? 0 : windows < 2 ? 1 : windows < 4 ? 2 : 3);

/** Runs one conversation rolling and sorts its answers. */
export async function lossTally(id: string, ratio: number): Promise<LossTally> {
  const chat = loadRealChat(id);
  const summaries: ReadLine[][] = [];
  const texts: string[][] = [];
  const { last } = await rollRealChat(chat, ratio, {
    onSummary: (text) => {
      summaries.push(summaryLines(text));
      texts.push(text.split('\n').filter((line) => line.startsWith('- ')));
    },
  });
  const probe = new CompactManager({ model: 'gpt-4o', maxContextTokens: 10_000_000 });
  const sizes = chat.messages.map((m) => probe.estimate([m]).total);
  const sliding = slidingWindow(chat.messages, last.tokensAfter, (m) => probe.estimate(m).total);
  await probe.shutdown();
  // Tokens after each message to the chat's end, in windows of the request's size.
  const after = new Map<Record<string, unknown>, number>();
  let tail = 0;
  for (let i = chat.messages.length - 1; i >= 0; i--) {
    after.set(chat.messages[i]!, tail / last.tokensAfter);
    tail += sizes[i]!;
  }
  const byContent = new Set(chat.messages.map((m) => m.content));
  const request = last.messages as Record<string, unknown>[];
  const verbatim = request.filter((m) => byContent.has(m.content)).flatMap((m) => turnLines(chat, m));
  const summary = summaryLines(last.summary?.text ?? '');
  const windowLines = sliding.flatMap((m) => turnLines(chat, m));
  const zero = () => Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const tally: LossTally = {
    name: chat.name,
    ceiling: 0,
    kinds: zero(),
    window: 0,
    windowOnly: zero(),
    byAge: { total: [0, 0, 0, 0], kept: [0, 0, 0, 0] },
    pushedRounds: 0,
    lines: { ever: 0, answer: 0, roundsAll: 0, roundsAnswer: 0 },
    lastLines: { all: 0, answer: 0 },
  };
  const answerLine = new Map<string, boolean>();
  const rounds = new Map<string, number>();
  for (const round of texts) for (const line of round) rounds.set(line, (rounds.get(line) ?? 0) + 1);
  for (const { answer, evidence } of chat.answers) {
    const turns = new Set(evidence);
    const sequences = evidence.map((turn) => turnSequence(chat, turn));
    const at = (lines: readonly ReadLine[]) => heldAt(answer, lines, turns, sequences);
    if (!at(evidence.flatMap((m) => turnLines(chat, m)))) continue;
    tally.ceiling++;
    let kind: Kind;
    if (at(verbatim)) kind = 'verbatim';
    else if (at(summary)) kind = 'summary';
    else {
      const held = summaries.map(at);
      if (held.includes(true)) {
        kind = 'pushed';
        tally.pushedRounds += held.filter(Boolean).length;
      } else
        kind = at(evidence.flatMap((m) => clauseLines(String(m.content), chat.dates.get(m))))
          ? 'never'
          : 'split';
    }
    tally.kinds[kind]++;
    const age = ageBucket(Math.min(...evidence.map((m) => after.get(m) ?? 0)));
    tally.byAge.total[age]!++;
    if (kind === 'verbatim' || kind === 'summary') tally.byAge.kept[age]!++;
    for (const line of rounds.keys())
      if (!answerLine.get(line) && at([readLine(line)])) answerLine.set(line, true);
    if (at(windowLines)) {
      tally.window++;
      if (kind !== 'verbatim' && kind !== 'summary') tally.windowOnly[kind]++;
    }
  }
  for (const [line, n] of rounds) {
    const holds = answerLine.get(line) === true;
    tally.lines.ever++;
    tally.lines.roundsAll += n;
    if (holds) {
      tally.lines.answer++;
      tally.lines.roundsAnswer += n;
    }
  }
  for (const line of texts.at(-1) ?? []) {
    tally.lastLines.all++;
    if (answerLine.get(line) === true) tally.lastLines.answer++;
  }
  return tally;
}

/** Survival of summary lines: answer-holding share of every line written and of the last summary's. */
export function formatSurvival(tallies: readonly LossTally[]): string[] {
  const rows = [
    '| conversation | lines written | holding an answer | rounds held (answer / other) | last summary lines | holding an answer |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
  for (const t of tallies) {
    const { ever, answer, roundsAll, roundsAnswer } = t.lines;
    const other = (roundsAll - roundsAnswer) / Math.max(1, ever - answer);
    rows.push(
      `| ${t.name} | ${ever} | ${answer} (${pct(answer, ever)}) | ${(roundsAnswer / Math.max(1, answer)).toFixed(1)} / ${other.toFixed(1)} | ${t.lastLines.all} | ${t.lastLines.answer} (${pct(t.lastLines.answer, t.lastLines.all)}) |`,
    );
  }
  return rows;
}

/** One row per conversation and a total. */
export function formatLosses(tallies: readonly LossTally[]): string[] {
  const total: LossTally = {
    name: 'total',
    ceiling: 0,
    kinds: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
    window: 0,
    windowOnly: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
    byAge: { total: [0, 0, 0, 0], kept: [0, 0, 0, 0] },
    pushedRounds: 0,
    lines: { ever: 0, answer: 0, roundsAll: 0, roundsAnswer: 0 },
    lastLines: { all: 0, answer: 0 },
  };
  for (const t of tallies) {
    total.ceiling += t.ceiling;
    total.window += t.window;
    total.pushedRounds += t.pushedRounds;
    for (const k of KINDS) {
      total.kinds[k] += t.kinds[k];
      total.windowOnly[k] += t.windowOnly[k];
    }
    for (let a = 0; a < 4; a++) {
      total.byAge.total[a]! += t.byAge.total[a]!;
      total.byAge.kept[a]! += t.byAge.kept[a]!;
    }
  }
  const rows = [
    '| conversation | ceiling | verbatim | summary | kept | window | x window | window only (pushed/never/split) | pushed | never | split | mean rounds held | by age 0 / 1 / 2-3 / 4+ windows (kept/answers) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const t of [...tallies, total]) {
    const kept = t.kinds.verbatim + t.kinds.summary;
    const ages = t.byAge.total.map((n, a) => `${t.byAge.kept[a]}/${n}`).join(' ');
    rows.push(
      `| ${t.name} | ${t.ceiling} | ${t.kinds.verbatim} | ${t.kinds.summary} | ${kept} | ${t.window} | ${(kept / Math.max(1, t.window)).toFixed(1)}x | ${t.windowOnly.pushed}/${t.windowOnly.never}/${t.windowOnly.split} | ${t.kinds.pushed} | ${t.kinds.never} | ${t.kinds.split} | ${(t.pushedRounds / Math.max(1, t.kinds.pushed)).toFixed(1)} | ${ages} |`,
    );
  }
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string', default: 'tune' }, ratio: { type: 'string', default: '8' } },
  });
  const ids = LOCOMO_SETS[values.set as keyof typeof LOCOMO_SETS];
  if (!ids) throw new Error(`--set takes tune or held-out, got ${values.set}`);
  const tallies: LossTally[] = [];
  for (const id of ids) tallies.push(await lossTally(id, Number(values.ratio)));
  console.log(`${values.set} at 1/${values.ratio}:`);
  for (const row of formatLosses(tallies)) console.log(row);
  for (const row of formatSurvival(tallies)) console.log(row);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

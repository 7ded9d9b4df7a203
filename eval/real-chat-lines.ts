/**
 * Where the summary's tokens go on the real chats of `real-chat-facts.ts` (issue 45, point 3):
 * each conversation compacted rolling at 1/`ratio` with the default policy, then the last
 * summary's tokens split into headings, user sections (`## Task` quotes), speaker prefixes
 * and the lines' own text, and each line marked with the short answers it holds (the same
 * evidence rule as the figures: every content word in the line, which shares a run of
 * {@link SHINGLE} words with an evidence turn). Answers the verbatim turns already hold are
 * counted apart. To see which lines spend tokens without an answer.
 *
 * `npx tsx eval/real-chat-lines.ts [--set tune|held-out] [--ratio 8] [--lines]` (`--lines`
 * prints every summary line: `+` when it holds an answer, its tokens, the line, the answers).
 */
import { parseArgs } from 'node:util';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { heldAt, LOCOMO_SETS, loadRealChat, readLine, SHINGLE, turnSequence } from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';

/** Tokens of the last summary by part, and the answers it and the verbatim turns hold. */
interface Breakdown {
  summary: number;
  headings: number;
  userSections: number;
  prefixes: number;
  text: number;
  answerLineText: number;
  answersInSummary: number;
  answersVerbatim: number;
}

const PREFIX = /^- ([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*)?: )?/;

async function breakdown(id: string, ratio: number, print: boolean): Promise<Breakdown> {
  const chat = loadRealChat(id);
  const { last } = await rollRealChat(chat, ratio);
  const counter = tokenCounterFor('gpt-4o');
  const summary = last.summary?.text ?? '';
  const byContent = new Set(chat.messages.map((m) => m.content));
  const verbatim = (last.messages as Record<string, unknown>[]).filter((m) => byContent.has(m.content));
  const out: Breakdown = {
    summary: counter.countText(summary),
    headings: 0,
    userSections: 0,
    prefixes: 0,
    text: 0,
    answerLineText: 0,
    answersInSummary: 0,
    answersVerbatim: 0,
  };
  const held = new Map<string, string[]>();
  const lines = summary.split('\n').filter((line) => line.startsWith('- '));
  for (const { answer, evidence } of chat.answers) {
    const turns = new Set(evidence);
    const sequences = evidence.map((turn) => turnSequence(chat, turn));
    const verbatimLines = verbatim.map((m) => readLine(String(m.content), m));
    if (heldAt(answer, verbatimLines, turns, sequences)) {
      out.answersVerbatim++;
      continue;
    }
    const line = lines.find((l) => heldAt(answer, [readLine(l)], turns, sequences));
    if (!line) continue;
    out.answersInSummary++;
    held.set(line, [...(held.get(line) ?? []), answer]);
  }
  let section = '';
  for (const line of summary.split('\n')) {
    if (line.startsWith('## ')) {
      section = line;
      out.headings += counter.countText(line);
      continue;
    }
    if (!line.startsWith('- ')) continue;
    const tokens = counter.countText(line);
    if (section === '## Task' || line.startsWith('- "')) {
      out.userSections += tokens;
      continue;
    }
    const prefix = PREFIX.exec(line)?.[0] ?? '- ';
    const text = counter.countText(line.slice(prefix.length));
    out.prefixes += tokens - text;
    out.text += text;
    const answers = held.get(line);
    if (answers) out.answerLineText += text;
    if (print)
      console.log(
        `${answers ? '+' : ' '} ${String(tokens).padStart(3)} ${line}${answers ? `  <<${answers.join(' | ')}>>` : ''}`,
      );
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'tune' },
      ratio: { type: 'string', default: '8' },
      lines: { type: 'boolean', default: false },
    },
  });
  const ids = LOCOMO_SETS[values.set as keyof typeof LOCOMO_SETS];
  if (!ids) throw new Error(`--set takes tune or held-out, got ${values.set}`);
  const total: Record<string, number> = {};
  for (const id of ids) {
    if (values.lines) console.log(`## locomo-${id}`);
    const b = await breakdown(id, Number(values.ratio), values.lines);
    for (const [key, n] of Object.entries(b)) total[key] = (total[key] ?? 0) + n;
  }
  const t = total as unknown as Breakdown;
  const pct = (n: number) => `${((100 * n) / Math.max(1, t.summary)).toFixed(1)}%`;
  console.log(
    `summary ${t.summary} tokens: headings ${pct(t.headings)}, user sections ${pct(t.userSections)}, speaker prefixes ${pct(t.prefixes)}, line text ${pct(t.text)} (in lines holding an answer ${pct(t.answerLineText)}); answers held: ${t.answersInSummary} by the summary, ${t.answersVerbatim} by the verbatim turns (shingle ${SHINGLE})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

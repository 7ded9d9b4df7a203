/**
 * Telegraphic lines between people (issue 45, point 3, a candidate not landed): how many of
 * the last summary's tokens the words that carry no fact take. Each conversation of
 * `real-chat-facts.ts` is compacted rolling at 1/`ratio` with the default policy, and its
 * last summary's speaker lines (`- Name: ...`) are cut at three levels:
 *
 * 1. lowercase articles (`a`, `an`, `the`; a title's capital `The` stays);
 * 2. and intensifiers and fillers (`really`, `just`, `so`, `very`, `super`, `totally`,
 *    `actually`, `basically`, `honestly`, `definitely`, `literally`, `quite`; not after a
 *    negation: "not really" keeps its word);
 * 3. and hedges (`I think`, `I guess`, `I mean`, `you know`, `kind of`, `sort of`);
 *
 * a bracketed resolved date (`(the week before 9 January 2023)`) is left whole. Prints the
 * tokens of the lines, of their clause text (prefixes left out) and of the clause text at each
 * level (gpt-4o's tokenizer). Measured in the summarizer (the cut applied to each clause
 * between people before selection), the 5-7% it saves moved the tuning set's mean by under a
 * point and the held-out set's not at all (bench/notes/issue-45-real-chat-candidates.md,
 * section 7).
 *
 * `npx tsx eval/real-chat-telegraphic.ts [--set tune|held-out|all] [--ratio 8]`
 */
import { parseArgs } from 'node:util';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { loadRealChat, locomoSet } from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';

const ARTICLES = /(^|\s)(?:a|an|the)\s+(?=[^\s(])/g;
const FILLERS =
  /(^|\s)(?<!\bnot\s|n't\s|n’t\s)(?:really|just|so|very|super|totally|actually|basically|honestly|definitely|literally|quite)\s+(?=[^\s(])/gi;
const HEDGES = /(^|\s)(?:I think|I guess|I mean|you know|kind of|sort of)\s+(?=[^\s(])/g;
/** A bracketed aside (a resolved date): never cut. */
const BRACKETED = /(\([^()\n]{0,80}\))/;

/** `text` with its empty words dropped outside brackets, up to `level` (1-3, see the module comment). */
export function telegraphic(text: string, level: number): string {
  const parts = text.split(BRACKETED);
  for (let i = 0; i < parts.length; i += 2) {
    let part = parts[i]!;
    if (level >= 1) part = part.replace(ARTICLES, '$1');
    if (level >= 2) part = part.replace(FILLERS, '$1');
    if (level >= 3) part = part.replace(HEDGES, '$1');
    parts[i] = part;
  }
  const out = parts.join('');
  return out.trim() ? out : text;
}

/** A speaker line's prefix. */
const PREFIX = /^- [\w.'’-]{1,30}(?: [\w.'’-]{1,20})?: /;

/** Token counts of a summary's speaker lines, their clause text, and the clause text at levels 1-3. */
export function telegraphicSaving(summary: string): { lines: number; text: number; levels: number[] } {
  const counter = tokenCounterFor('gpt-4o');
  const lines = summary.split('\n').filter((line) => PREFIX.test(line));
  const text = lines.map((line) => line.replace(PREFIX, ''));
  const count = (parts: string[]) => counter.countText(parts.join('\n'));
  return {
    lines: count(lines),
    text: count(text),
    levels: [1, 2, 3].map((level) => count(text.map((t) => telegraphic(t, level)))),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string', default: 'tune' }, ratio: { type: 'string', default: '8' } },
  });
  const ids = locomoSet(values.set);
  const pct = (a: number, b: number) => `${((100 * (b - a)) / Math.max(1, b)).toFixed(1)}%`.padStart(7);
  console.log('conversation  lines  text  level 1 saves  level 2 saves  level 3 saves  (of the clause text)');
  for (const id of ids) {
    const chat = loadRealChat(id);
    const s = telegraphicSaving((await rollRealChat(chat, Number(values.ratio))).last.summary?.text ?? '');
    console.log(
      `${chat.name.padEnd(12)}  ${String(s.lines).padStart(5)}  ${String(s.text).padStart(4)}  ${s.levels.map((n) => `${pct(n, s.text)} (${n})`.padStart(13)).join('  ')}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

/**
 * Where the tokens of the last summary of `real-chat-facts.ts` go (issue 45, point 3): each
 * conversation compacted rolling at 1/`ratio` with the default policy (or `--policy`), and
 * its last summary split into markup and what it quotes:
 *
 * - headings: the segments' date lines (`## 9 January`) and the other section headings;
 * - prefixes: each line's bullet and speaker (`- John: `);
 * - dates: the resolved relative dates the summarizer inserts (`(the week before 9 January
 *   2023)`, `(7 May 2023)`);
 * - head: the lines of the user sections before the first dated heading (`## Task`: a
 *   person's words quoted as the user's);
 * - the rest: the quoted clauses themselves.
 *
 * Shares are of the summary's tokens (gpt-4o's tokenizer), totals over the set; each part
 * is counted on its own, so the parts add to a little more or less than the whole.
 *
 * `npx tsx eval/real-chat-overhead.ts [--set tune|held-out|all] [--ratio 8] [--policy JSON]`
 */
import { parseArgs } from 'node:util';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import type { CompactPolicy } from '../src/core/policy.js';
import { loadRealChat, locomoSet, type RealChat } from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';

/** A resolved relative date as the summarizer writes it after its phrase. */
const RESOLVED =
  / \((?:the (?:week|weekend) (?:of|before|after) )?(?:\d{1,2} )?(?:[A-Z][a-z]{2,8} )?\d{4}\)/g;
const PREFIX = /^- (?:[\w.'’-]{1,30}(?: [\w.'’-]{1,20})?: )?/;
/** A dated heading: the first one ends the user sections. */
const DATED = /^## \d{1,2} [A-Z][a-z]+/;

/** Token counts of one summary's parts. */
export interface Overhead {
  name: string;
  total: number;
  headings: number;
  prefixes: number;
  dates: number;
  head: number;
  lines: number;
  segments: number;
}

/** Splits a summary text (tags and mark left out) into its parts' token counts. */
export function summaryOverhead(name: string, summary: string): Overhead {
  const counter = tokenCounterFor('gpt-4o');
  const count = (parts: string[]) => (parts.length > 0 ? counter.countText(parts.join('\n')) : 0);
  const body = summary.split('\n').filter((line) => !/^<\/?COMPACT-SUMMARY|^\[summary-mark /.test(line));
  const firstDated = body.findIndex((line) => DATED.test(line));
  const headings = body.filter((line) => line.startsWith('## '));
  const bullets = body.filter((line) => line.startsWith('- '));
  return {
    name,
    total: count(body),
    headings: count(headings),
    prefixes: count(bullets.map((line) => PREFIX.exec(line)?.[0] ?? '')),
    dates: count(bullets.flatMap((line) => [...line.matchAll(RESOLVED)].map((m) => m[0]))),
    head: firstDated > 0 ? count(body.slice(0, firstDated)) : 0,
    lines: bullets.length,
    segments: headings.filter((line) => DATED.test(line)).length,
  };
}

/** Compacts one conversation rolling at 1/`ratio` and splits its last summary. */
export async function overheadRun(
  chat: RealChat,
  ratio = 8,
  policy: Partial<CompactPolicy> = {},
): Promise<Overhead> {
  const { last } = await rollRealChat(chat, ratio, { policy });
  return summaryOverhead(chat.name, last.summary?.text ?? '');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      set: { type: 'string', default: 'tune' },
      ratio: { type: 'string', default: '8' },
      policy: { type: 'string', default: '{}' },
    },
  });
  const ids = locomoSet(values.set);
  const policy = JSON.parse(values.policy) as Partial<CompactPolicy>;
  const runs: Overhead[] = [];
  for (const id of ids) runs.push(await overheadRun(loadRealChat(id), Number(values.ratio), policy));
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`.padStart(6);
  console.log('conversation  tokens  lines  segments  headings  prefixes   dates    head');
  const row = (r: Overhead) =>
    `${r.name.padEnd(12)}  ${String(r.total).padStart(6)}  ${String(r.lines).padStart(5)}  ${String(r.segments).padStart(8)}  ${pct(r.headings, r.total).padStart(8)}  ${pct(r.prefixes, r.total).padStart(8)}  ${pct(r.dates, r.total)}  ${pct(r.head, r.total)}`;
  for (const r of runs) console.log(row(r));
  const sum = (f: (r: Overhead) => number) => runs.reduce((n, r) => n + f(r), 0);
  console.log(
    row({
      name: 'total',
      total: sum((r) => r.total),
      lines: sum((r) => r.lines),
      segments: sum((r) => r.segments),
      headings: sum((r) => r.headings),
      prefixes: sum((r) => r.prefixes),
      dates: sum((r) => r.dates),
      head: sum((r) => r.head),
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

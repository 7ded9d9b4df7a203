/**
 * `npx tsx bench/sliced-parse.ts [--rounds=7]`: wall time of the proxy's parse of a 20 MB first
 * body at once (`ParsedBodies.parse`: JSON.parse + json-layout scan) and across turns of the loop
 * (`parseInSlices`), alternated in one process; and the CLI's input read (`parseInput` of the
 * text vs `parseInputBytes`). Prints min / median of each and the ratio of the medians, with the
 * longest wall-clock gap between two turns of the loop seen during the sliced parse.
 */
import os from 'node:os';
import { parseInput, parseInputBytes } from '../src/cli/read-input.js';
import { ParsedBodies } from '../src/proxy/bodies/parsed-bodies.js';
import { PROXY_ROUTES } from '../src/proxy/proxy-routes.js';

const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 7);
const route = PROXY_ROUTES.find((r) => r.path === '/v1/chat/completions')!;
const messages = Array.from({ length: 16_000 }, (_, i) =>
  i % 2 === 0
    ? { role: 'user', content: `step ${i}: ${'please read the file and fix the failing test. '.repeat(25)}` }
    : { role: 'assistant', content: `done ${i} ${'ok, the test "passes" now \\ é😀 '.repeat(30)}` },
);
const bytes = Buffer.from(JSON.stringify({ model: 'gpt-4o', messages }));
const text = bytes.toString('utf8');

/** Wall time of `work`, and the longest gap between two setImmediate turns while it ran. */
async function timed(work: () => unknown): Promise<{ ms: number; gap: number }> {
  let gap = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  running = false;
  gap = Math.max(gap, performance.now() - last);
  await new Promise((resolve) => setImmediate(resolve));
  return { ms, gap };
}

const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const fmt = (v: number[]) => `${Math.min(...v).toFixed(1)} / ${med(v).toFixed(1)}`;
const cases: Record<string, () => unknown> = {
  'proxy parse at once': () => new ParsedBodies().parse(route, bytes),
  'proxy parseInSlices': () => new ParsedBodies().parseInSlices(route, bytes),
  'cli parseInput(text)': () => parseInput(bytes.toString('utf8')),
  'cli parseInputBytes': () => parseInputBytes(bytes),
};
const results: Record<string, { ms: number[]; gap: number[] }> = {};
for (const name of Object.keys(cases)) results[name] = { ms: [], gap: [] };
for (let round = 0; round < rounds; round++) {
  for (const [name, work] of Object.entries(cases)) {
    const { ms, gap } = await timed(work);
    results[name]!.ms.push(ms);
    results[name]!.gap.push(gap);
  }
}
console.log(
  `body ${(bytes.length / 2 ** 20).toFixed(1)} MB (${text.length} chars), ${rounds} rounds alternated, load ${os.loadavg()[0]!.toFixed(1)}`,
);
for (const [name, r] of Object.entries(results))
  console.log(
    `  ${name.padEnd(24)} wall min/median ${fmt(r.ms)} ms; longest gap min/median ${fmt(r.gap)} ms`,
  );
const ratio = (a: string, b: string) => (med(results[b]!.ms) / med(results[a]!.ms)).toFixed(2);
console.log(
  `  ratio of medians: proxy ${ratio('proxy parse at once', 'proxy parseInSlices')}, cli ${ratio('cli parseInput(text)', 'cli parseInputBytes')}`,
);

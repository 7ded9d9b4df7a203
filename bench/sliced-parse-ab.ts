/**
 * `npx tsx bench/sliced-parse-ab.ts OLD_TREE [rounds]`: parseJsonInSlices of this tree against
 * the one in OLD_TREE (a checkout or `git archive REV | tar -x -C OLD_TREE` of an older commit):
 * first the same values, layouts and errors on a few documents and option sets (small batches
 * force every path), then the wall time of a ~18 MB body (sliced as the proxy does, and with
 * a slice that never pauses) and the CPU time, and the CPU time of 1M tiny elements (the cost of
 * each element's step), old and new alternated; min / median of each.
 */
import os from 'node:os';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseJsonInSlices as newParse } from '../src/core/json/parse-json-in-slices.js';
import { TimeSlice } from '../src/core/time-slice.js';

const oldTree = process.argv[2];
if (!oldTree) throw new Error('usage: sliced-parse-ab.ts OLD_TREE [rounds]');
const { parseJsonInSlices: oldParse } = (await import(
  resolve(oldTree, 'src/core/json/parse-json-in-slices.ts')
)) as { parseJsonInSlices: typeof newParse };

const messages = Array.from({ length: 16_000 }, (_, i) =>
  i % 2 === 0
    ? { role: 'user', content: `step ${i}: ${'please read the file and fix the failing test. '.repeat(25)}` }
    : { role: 'assistant', content: `done ${i} ${'ok, the test "passes" now \\ é😀 '.repeat(30)}` },
);
const big = Buffer.from(JSON.stringify({ model: 'gpt-4o', messages, tools: [{ a: 1 }], __proto__x: 1 }));
// Same-result checks on every path: small batches and small "large" thresholds force nesting.
const docs = [
  big,
  Buffer.from(JSON.stringify([messages.slice(0, 300), { x: messages.slice(0, 50), y: [[1, 2], [], {}] }])),
  Buffer.from('{"a":1,"a":2,"__proto__":{"b":[1,2,3]},"messages":[{"x":1},{"y":[1,2]}] }'),
  Buffer.from(' [ 1 , "x" , {"k" : [ ] } , [ [ [ 1 ] ] ] ] '),
];
for (const doc of docs)
  for (const opts of [
    {},
    { batchBytes: 16, largeBytes: 32 },
    { batchBytes: 1, largeBytes: 1, layoutOf: 'messages' },
    { layoutOf: 'messages' },
  ]) {
    const a = await oldParse(doc, opts);
    const b = await newParse(doc, opts);
    if (!isDeepStrictEqual(a, b) || JSON.stringify(a) !== JSON.stringify(b)) throw new Error('differ');
  }
for (const bad of ['[1,]', '{"a":1,}', '[1 2]', '{"a" 1}', '{a:1}', '[', '{"a":[1,2}']) {
  const msg = async (f: typeof oldParse) =>
    f(Buffer.from(bad), { batchBytes: 1, largeBytes: 1 }).then(
      () => 'ok',
      (e: Error) => `${e.name}: ${e.message}`,
    );
  const [x, y] = [await msg(oldParse), await msg(newParse)];
  if (x !== y) throw new Error(`error differs on ${bad}: ${x} / ${y}`);
}
console.log('same results and errors on', docs.length, 'documents x 4 option sets and 7 bad inputs');
const rounds = Number(process.argv[3] ?? 21);
const t: Record<string, number[]> = {
  old: [],
  new: [],
  'old cpu': [],
  'new cpu': [],
  'old unsliced': [],
  'new unsliced': [],
  'old tiny cpu': [],
  'new tiny cpu': [],
};
// The worst case for the cost of each element's step: 1M tiny elements read one by one.
const tiny = Buffer.from(
  JSON.stringify({ model: 'x', messages: Array.from({ length: 1_000_000 }, (_, i) => i % 7) }),
);
for (let r = 0; r < rounds; r++)
  for (const [name, f] of (r % 2
    ? [
        ['new', newParse],
        ['old', oldParse],
      ]
    : [
        ['old', oldParse],
        ['new', newParse],
      ]) as [string, typeof oldParse][]) {
    let c = process.cpuUsage();
    let s = performance.now();
    await f(big, { layoutOf: 'messages' });
    t[name]!.push(performance.now() - s);
    c = process.cpuUsage(c);
    t[`${name} cpu`]!.push((c.user + c.system) / 1000);
    s = performance.now();
    await f(big, { layoutOf: 'messages', slice: new TimeSlice({ sliceMs: 1e9 }) });
    t[`${name} unsliced`]!.push(performance.now() - s);
    c = process.cpuUsage();
    await f(tiny, { layoutOf: 'messages', slice: new TimeSlice({ sliceMs: 1e9 }) });
    c = process.cpuUsage(c);
    t[`${name} tiny cpu`]!.push((c.user + c.system) / 1000);
  }
const med = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
console.log(
  `body ${(big.length / 2 ** 20).toFixed(1)} MB, ${rounds} rounds alternated, load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
for (const k of Object.keys(t))
  console.log(`  ${k.padEnd(13)}: min ${Math.min(...t[k]!).toFixed(1)} median ${med(t[k]!).toFixed(1)} ms`);
for (const k of ['', ' cpu', ' unsliced', ' tiny cpu'])
  console.log(
    `  new/old medians${k}: ${(med(t[`new${k}`]!) / med(t[`old${k}`]!)).toFixed(3)}, mins ${(Math.min(...t[`new${k}`]!) / Math.min(...t[`old${k}`]!)).toFixed(3)}`,
  );

/**
 * `npx tsx bench/redaction-gates.ts <old root>`: the first look of src/core/redaction/unicode-escapes.ts
 * (`hasUnicodeEscape`, run by every scan pass before the rules) against an old tree's, in one
 * process, alternated, on 10 MB inputs (flat strings, as JSON.parse gives them). Median and
 * minimum of 9 runs each, in ms.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Gate = (text: string) => boolean;
const load = async (root: string) =>
  (
    (await import(`${pathToFileURL(resolve(root)).href}/src/core/redaction/unicode-escapes.ts`)) as {
      hasUnicodeEscape: Gate;
    }
  ).hasUnicodeEscape;
const gates: [string, Gate][] = [
  ['new', await load(new URL('..', import.meta.url).pathname)],
  ['old', await load(process.argv[2] ?? '/tmp/old')],
];
const TEN_MB = 10 * 1024 * 1024;
const fill = (unit: string) =>
  JSON.parse(JSON.stringify(unit.repeat(Math.ceil(TEN_MB / unit.length)).slice(0, TEN_MB))) as string;
const inputs: [string, string][] = [
  ['HTML with references', fill('<p>Tom &amp; Jerry&nbsp;went&#8203; home &#39;b&#39; ok</p>\n')],
  [
    'Japanese prose, short fullwidth words',
    fill('２０２４年、ＩＤ：４２のＵＲＬ（API）を開いてください。設定を確認します。\n'),
  ],
  [
    'CJK prose, fullwidth punctuation',
    fill('部署脚本读取环境，检查健康端点（健康），失败时回滚！数据库连接正常。\n'),
  ],
  ['ASCII prose', fill('the deploy script reads the environment and rolls back on failure.\n')],
];
for (const [name, text] of inputs) {
  const times = new Map<string, number[]>(gates.map(([label]) => [label, []]));
  const answers = new Map<string, boolean>();
  for (let r = 0; r < 9; r++) {
    for (const [label, gate] of gates) {
      const start = performance.now();
      answers.set(label, gate(text));
      times.get(label)!.push(performance.now() - start);
    }
  }
  const line = gates.map(([label]) => {
    const sorted = times.get(label)!.sort((a, b) => a - b);
    return `${label} ${answers.get(label)} median ${sorted[4]!.toFixed(1)} (min ${sorted[0]!.toFixed(1)})`;
  });
  console.log(`${name}: ${line.join(' | ')}`);
}

/**
 * `npx tsx bench/redaction-gates.ts <old root> [<other root>...]`: the first look of a scan pass
 * (`hasUnicodeEscape` in src/core/redaction/find-decoded.ts, unicode-escapes.ts before review-86a, then, where the tree has it,
 * `redactHiddenKeys` in hidden-key-windows.ts with a rule finder that finds nothing: its hits and
 * the windows it decodes) against older trees', in one process, alternated, on 10 MB inputs
 * (flat strings, as JSON.parse gives them). Median and minimum of 9 runs each, in ms.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Gate = (text: string) => boolean;
type Windows = (text: string, find: (text: string, sink: unknown) => void) => string;
const load = async (root: string): Promise<Gate> => {
  const base = `${pathToFileURL(resolve(root)).href}/src/core/redaction`;
  const { hasUnicodeEscape } = (await import(`${base}/find-decoded.ts`).catch(
    () => import(`${base}/unicode-escapes.ts`),
  )) as { hasUnicodeEscape: Gate };
  const windows = await import(`${base}/hidden-key-windows.ts`).then(
    (module: { redactHiddenKeys: Windows }) => module.redactHiddenKeys,
    () => undefined,
  );
  if (windows === undefined) return hasUnicodeEscape;
  const none = () => {};
  return (text) => hasUnicodeEscape(text) || windows(text, none) !== text;
};
const roots = process.argv.slice(2);
const gates: [string, Gate][] = [['new', await load(new URL('..', import.meta.url).pathname)]];
for (const [index, root] of (roots.length > 0 ? roots : ['/tmp/old']).entries())
  gates.push([index === 0 ? 'old' : `old${index + 1}`, await load(root)]);
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
  [
    'CJK prose, fullwidth words of 8+ letters',
    fill('部署脚本读取环境，检查（ｋｕｂｅｒｎｅｔｅｓ）端点，失败时回滚！数据库连接正常。\n'),
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

/**
 * `npx tsx bench/redaction-encoded.ts [root]`: what the first look at encoded text
 * (src/core/redaction/find-decoded.ts, unicode-escapes.ts before review-86a) costs on 10 MB inputs: `hasUnicodeEscape` (the gate)
 * and a whole `redact` on HTML dense with character references (`&amp;`, `&nbsp;`, `&#8203;`
 * between words), on URLs dense with percent-encoded UTF-8 (`%C3%A9`, `%E2%80%8B` between words),
 * on CJK prose with fullwidth letters (a fullwidth key's gate is true: the copy is scanned) or
 * fullwidth punctuation only, on ASCII prose, and on Russian prose and JSON with Cyrillic
 * values, and Russian words of look-alike letters before `:` and `=` (the look-alike key finder
 * reads back from every `=` and `:`). `root`: a tree to measure (an old
 * checkout from `git archive`; default this one). Median and minimum of 7 runs, in ms.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = pathToFileURL(resolve(process.argv[2] ?? new URL('..', import.meta.url).pathname)).href;
const { createRedactor } = (await import(`${root}/src/core/redaction/redactor.ts`)) as {
  createRedactor: () => (text: string) => string;
};
const { hasUnicodeEscape } = (await import(`${root}/src/core/redaction/find-decoded.ts`).catch(
  () => import(`${root}/src/core/redaction/unicode-escapes.ts`),
)) as {
  hasUnicodeEscape: (text: string) => boolean;
};
const redact = createRedactor();
const TEN_MB = 10 * 1024 * 1024;
// Flat, as JSON.parse gives them (a sliced rope reads each character slower).
const fill = (unit: string) =>
  JSON.parse(JSON.stringify(unit.repeat(Math.ceil(TEN_MB / unit.length)).slice(0, TEN_MB))) as string;
const inputs: [string, string][] = [
  ['HTML with references', fill('<p>Tom &amp; Jerry&nbsp;went&#8203; home &lt;b&gt; ok</p>\n')],
  ['URLs with percent UTF-8', fill('GET /search?q=caf%C3%A9%20cr%C3%A8me&x=%E2%80%8B 200\n')],
  [
    'CJK prose with fullwidth letters',
    fill('部署脚本读取环境，检查健康端点（／ｈｅａｌｔｈ），失败时回滚！数据库连接正常。\n'),
  ],
  [
    'CJK prose, fullwidth words of 8+ letters',
    fill('部署脚本读取环境，检查（ｋｕｂｅｒｎｅｔｅｓ）端点，失败时回滚！数据库连接正常。\n'),
  ],
  [
    'Japanese prose, short fullwidth words',
    fill('２０２４年、ＩＤ：４２のＵＲＬ（API）を開いてください。設定を確認します。\n'),
  ],
  [
    'CJK prose, fullwidth punctuation',
    fill('部署脚本读取环境，检查健康端点（健康），失败时回滚！数据库连接正常。\n'),
  ],
  ['ASCII prose', fill('the deploy script reads the environment and rolls back on failure.\n')],
  // review-86a: look-alike letters (Cyrillic, Greek) and separators dense, no key among them.
  ['Russian prose', fill('Скрипт читает окружение: проверяет адрес=хост и откатывает при сбое.\n')],
  ['JSON with Cyrillic values', fill('{"name": "Сергей", "city": "Москва", "role": "admin", "n": 42},\n')],
  // review-87a: words of look-alike letters only before the separators (each read back whole).
  ['Russian, look-alike words', fill('Он сказал: ору, сор, рос, хор=мор; ура: нос, ох: ах\n')],
];
for (const [name, text] of inputs) {
  for (const [what, run] of [
    ['gate', () => hasUnicodeEscape(text)],
    ['redact', () => redact(text)],
  ] as const) {
    const times: number[] = [];
    for (let r = 0; r < 7; r++) {
      const start = performance.now();
      run();
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    console.log(`${name}, ${what}: median ${times[3]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)})`);
  }
}

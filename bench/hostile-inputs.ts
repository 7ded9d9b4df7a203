/**
 * `npx tsx bench/hostile-inputs.ts`: the redactor and the summary-tag defuser on 4 MB inputs
 * built to be slow (issue 44 point 5, target at least 20 MB/s each): look-alike tags in
 * non-ASCII (fullwidth, Cyrillic, small capitals, zero-width joiners), repeated `auth="`,
 * `://a:` runs, and the other adversarial shapes of test/redaction/adversarial-inputs.test.ts.
 * Prints the median MB/s of 5 runs per input, by wall clock and by CPU time (state `uptime`
 * beside them); `runHostileInputsBench()` returns the rows.
 */
import { getDefaultRedactor } from '../src/core/redaction/redactor.js';
import { defuseSummaryMarkup } from '../src/core/summary/summary-markup.js';

const SIZE = 4 * 1024 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

export const HOSTILE_INPUTS: readonly (readonly [string, string])[] = [
  ['fullwidth look-alike tags', fill('＜ＣＯＭＰＡＣＴ－ＳＵＭＭＡＲＹ ｖ９＞ ')],
  ['Cyrillic and small-capital tags', fill('<СOMPACT-SUMMARY <ᴄᴏᴍᴘᴀᴄᴛ-ꜱᴜᴍᴍᴀʀʏ ')],
  ['zero-width joiners inside tags', fill('<\u200bcompact\u200d-\u200bsummary\u2060 ')],
  ['non-ASCII prose with <', fill('<Привет мир, это текст без тега. ')],
  ['auth=" repeated', fill('auth="')],
  ['://a: runs', fill('://a:')],
  ['key = value with many keys', fill('token=a password=b secret=c ')],
  ['sk- and ghp_ prefixes repeated', fill('sk-ghp_')],
  ['Bearer repeated', fill('Bearer ')],
  ['pipes after digits (Facebook tokens)', fill('1234567890123456|')],
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Median MB/s of 5 runs after a warm-up: by the wall clock, and by the process's CPU time
 * (user + system), which other processes on a loaded machine disturb less.
 */
function rate(run: (text: string) => string, text: string): { wall: number; cpu: number } {
  run(text);
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let index = 0; index < 5; index++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    run(text);
    walls.push(performance.now() - start);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
  }
  const megabytes = Buffer.byteLength(text) / 1e6;
  return { wall: megabytes / (median(walls) / 1000), cpu: megabytes / (median(cpus) / 1000) };
}

export interface HostileRow {
  readonly input: string;
  /** Wall-clock MB/s (median of 5). */
  readonly redactorMBps: number;
  readonly defuserMBps: number;
  /** MB/s by CPU time (median of 5). */
  readonly redactorCpuMBps: number;
  readonly defuserCpuMBps: number;
}

export function runHostileInputsBench(): HostileRow[] {
  const redact = getDefaultRedactor();
  return HOSTILE_INPUTS.map(([input, text]) => {
    const redactor = rate(redact, text);
    const defuser = rate(defuseSummaryMarkup, text);
    return {
      input,
      redactorMBps: redactor.wall,
      defuserMBps: defuser.wall,
      redactorCpuMBps: redactor.cpu,
      defuserCpuMBps: defuser.cpu,
    };
  });
}

/** One row as printed (MB/s by wall clock, then by CPU time). */
export function formatHostileRow(row: HostileRow): string {
  const figure = (value: number) => value.toFixed(1).padStart(7);
  return `${row.input.padEnd(38)} redactor ${figure(row.redactorMBps)} MB/s (CPU ${figure(row.redactorCpuMBps)})  defuser ${figure(row.defuserMBps)} MB/s (CPU ${figure(row.defuserCpuMBps)})`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of runHostileInputsBench()) console.log(formatHostileRow(row));
}

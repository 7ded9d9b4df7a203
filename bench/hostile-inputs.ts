/**
 * `npx tsx bench/hostile-inputs.ts`: the redactor and the summary-tag defuser on 4 MB inputs
 * built to be slow (issue 44 point 5, target at least 20 MB/s each): look-alike tags in
 * non-ASCII (fullwidth, Cyrillic, small capitals, zero-width joiners), repeated `auth="`,
 * `://a:` runs, and the other adversarial shapes of test/redaction/adversarial-inputs.test.ts.
 * Prints the median MB/s of 5 runs per input, by wall clock and by CPU time (state `uptime`
 * beside them); `runHostileInputsBench()` returns the rows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getDefaultRedactor } from '../src/core/redaction/redactor.js';
import { defuseSummaryMarkup } from '../src/core/summary/summary-markup.js';

const SIZE = 4 * 1024 * 1024;
const fill = (unit: string, size = SIZE) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
/** Issue 44 point 5: at least 20 MB/s, by CPU time (the figure the machine's load disturbs least). */
export const TARGET_MBPS = 20;

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
function rate(run: (text: string) => string, text: string, runs = 5): { wall: number; cpu: number } {
  run(text);
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let index = 0; index < runs; index++) {
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

/**
 * The redactor's MB/s (CPU) on 4 MB of real transcript text (the SWE-agent trajectories of
 * bench/redaction.ts), measured in the same run: the hostile rows as a share of it do not
 * depend on the machine's load.
 */
export function ordinaryRedactorMBps(): number {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url);
  const parts: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.traj'))) {
    const trajectory = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as {
      history: { content: unknown }[];
    };
    for (const { content } of trajectory.history)
      parts.push(typeof content === 'string' ? content : JSON.stringify(content));
  }
  return rate(getDefaultRedactor(), fill(parts.join('\n'))).cpu;
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

const verdict = (cpu: number) => (cpu >= TARGET_MBPS ? 'met' : 'MISSED');

/**
 * One row as printed: MB/s by wall clock, then by CPU time with the verdict against the
 * target, and the redactor's CPU figure as a share of its speed on ordinary text (`ordinary`,
 * same run) when given.
 */
export function formatHostileRow(row: HostileRow, ordinary?: number): string {
  const figure = (value: number) => value.toFixed(1).padStart(7);
  const share = ordinary ? ` ${(row.redactorCpuMBps / ordinary).toFixed(2).padStart(5)}x ordinary` : '';
  return `${row.input.padEnd(38)} redactor ${figure(row.redactorMBps)} MB/s (CPU ${figure(row.redactorCpuMBps)} ${verdict(row.redactorCpuMBps).padEnd(6)}${share})  defuser ${figure(row.defuserMBps)} MB/s (CPU ${figure(row.defuserCpuMBps)} ${verdict(row.defuserCpuMBps)})`;
}

/** The rows whose time grows with the number of matches: 1, 4 and 10 MB of each. */
const SCALED = ['auth=" repeated', '://a: runs', 'key = value with many keys', 'Bearer repeated'];

/**
 * Linear time: the redactor's CPU ms per MB at 1, 4 and 10 MB of the densest hostile inputs
 * (median of 3), and 10 MB against 1 MB (target at most 1.5x: no hidden quadratic step).
 */
export function hostileScaling(): { input: string; msPerMB: number[]; ratio: number }[] {
  const redact = getDefaultRedactor();
  return SCALED.map((input) => {
    const unit = HOSTILE_INPUTS.find(([name]) => name === input)![1].slice(0, 64);
    const base = HOSTILE_INPUTS.find(([name]) => name === input)![1];
    // The row's repeated unit: the shortest prefix that the 4 MB input repeats.
    let period = 1;
    while (period < unit.length && !base.startsWith(base.slice(0, period), period)) period++;
    const msPerMB = [1, 4, 10].map((megabytes) => {
      const text = fill(base.slice(0, period), megabytes * 1024 * 1024);
      return 1000 / rate(redact, text, 3).cpu;
    });
    return { input, msPerMB, ratio: msPerMB[2]! / msPerMB[0]! };
  });
}

export function formatScaling(row: { input: string; msPerMB: number[]; ratio: number }): string {
  const [one, four, ten] = row.msPerMB.map((value) => value.toFixed(1).padStart(6));
  return `${row.input.padEnd(38)} CPU ms per MB at 1 / 4 / 10 MB: ${one} ${four} ${ten}  (10 MB / 1 MB ${row.ratio.toFixed(2)}x, target <= 1.5x: ${row.ratio <= 1.5 ? 'met' : 'MISSED'})`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ordinary = ordinaryRedactorMBps();
  console.log(`ordinary transcript text, 4 MB: redactor CPU ${ordinary.toFixed(1)} MB/s`);
  for (const row of runHostileInputsBench()) console.log(formatHostileRow(row, ordinary));
  for (const row of hostileScaling()) console.log(formatScaling(row));
}

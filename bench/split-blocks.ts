/**
 * `npx tsx bench/split-blocks.ts [root]`: the cost of redacting across the seams of adjacent
 * text blocks (src/core/redaction/split-secrets.ts) on 10 MB inputs: `redactDeep` over a
 * message of many `{type: 'text'}` blocks, and `redactMessage` (the summarizer's input) over
 * an Anthropic message of many two-block tool results, every seam a split password or none.
 * `root` is a tree to measure (an old checkout extracted with `git archive`; default: this
 * one). Prints the median and the minimum of 5 runs of each.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = pathToFileURL(resolve(process.argv[2] ?? new URL('..', import.meta.url).pathname)).href;
type Redactor = (text: string) => string;
const { createRedactor, redactDeep } = (await import(`${root}/src/core/redaction/redactor.ts`)) as {
  createRedactor: () => Redactor;
  redactDeep: <T>(value: T, redact: Redactor) => T;
};
const { redactMessage } = (await import(`${root}/src/core/preflight/cascade/summarize-remainder.ts`)) as {
  redactMessage: (message: unknown, redact: Redactor) => unknown;
};
const redact = createRedactor();
const WORDS = 'the deploy script reads the environment and rolls back on failure while ';
const TEN_MB = 10 * 1024 * 1024;
const body = (size: number) => WORDS.repeat(Math.ceil(size / WORDS.length)).slice(0, size);

function blocks(size: number, splitEvery: number): unknown {
  const content: unknown[] = [];
  for (let total = 0, i = 0; total < TEN_MB; i++) {
    let text = body(size);
    if (splitEvery > 0 && i % splitEvery === 0) text = `${text.slice(0, -30)} password=`;
    content.push({ type: 'text', text });
    total += text.length;
  }
  return { role: 'tool', content };
}

function toolResults(results: number, size: number, split: boolean): unknown {
  const content: unknown[] = [];
  const parsed: unknown[] = [];
  for (let i = 0; i < results; i++) {
    const pair = [
      { type: 'text', text: split ? `${body(size)} db_password=` : body(size) },
      { type: 'text', text: split ? `Zq8vLm2xKp4Rt7Wn ${body(size)}` : body(size) },
    ];
    content.push({ type: 'tool_result', tool_use_id: `toolu_${i}`, content: pair });
    parsed.push({ callId: `toolu_${i}`, output: pair.map((block) => block.text).join('\n') });
  }
  const raw = { role: 'user', content };
  return {
    id: 'm',
    role: 'user',
    kind: 'message',
    text: '',
    toolCalls: [],
    toolResults: parsed,
    format: 'anthropic',
    raw,
  };
}

const cases: [string, () => unknown][] = [
  [
    'redactDeep, 40k blocks of 256',
    (
      (value) => () =>
        redactDeep(value, redact)
    )(blocks(256, 0)),
  ],
  [
    'redactDeep, 40k blocks of 256, every 2nd ends password=',
    (
      (value) => () =>
        redactDeep(value, redact)
    )(blocks(256, 2)),
  ],
  [
    'redactDeep, 160 blocks of 64 KB',
    (
      (value) => () =>
        redactDeep(value, redact)
    )(blocks(65_536, 0)),
  ],
  [
    'redactMessage, 20k results of 2x256, every seam split',
    (
      (m) => () =>
        redactMessage(m, redact)
    )(toolResults(20_000, 256, true)),
  ],
  [
    'redactMessage, 20k results of 2x256, clean',
    (
      (m) => () =>
        redactMessage(m, redact)
    )(toolResults(20_000, 256, false)),
  ],
  [
    'redactMessage, 2 results of 2x2.5 MB, split',
    (
      (m) => () =>
        redactMessage(m, redact)
    )(toolResults(2, 2_600_000, true)),
  ],
];
for (const [name, run] of cases) {
  const times: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`${name}: median ${times[2]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)})`);
}

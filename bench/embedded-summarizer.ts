/**
 * `npx tsx bench/embedded-summarizer.ts`: the embedded summarizer on pathological inputs
 * (issue 16 point 7): 100 KB of one character, a 100 KB hex blob and 80,000 characters with
 * no space, each as a user message and as a tool output, against ordinary text of the same
 * size; then a ~100k-token agent history. Prints medians of 5 runs; the target is at most
 * 100 ms more than ordinary text of the same size.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { plantedSession } from '../eval/planted-session.js';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { MESSAGE_CODECS } from '../src/core/messages/formats/detect-format.js';
import type { CompactMessage } from '../src/core/messages/message.js';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';

const RUNS = 5;
const TARGET_EXTRA_MS = 100;
const counter = tokenCounterFor('gpt-4o');
const countTokens = (text: string) => counter.countText(text);
const summarizer = new EmbeddedSummarizer();

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Ordinary text: the vendored SWE-agent transcripts (real prose, code and output), else generated prose. */
function ordinary(size: number): string {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url);
  let text = '';
  if (existsSync(dir)) {
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.traj'))) {
      const trajectory = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as {
        history: { content: unknown }[];
      };
      for (const { content } of trajectory.history)
        text +=
          typeof content === 'string'
            ? content
            : (content as { text?: string }[]).map((p) => p.text ?? '').join('\n');
    }
  }
  while (text.length < size)
    text += 'We moved the ledger job to the night shift because the morning run kept timing out. ';
  return text.slice(0, size);
}

function hexBlob(size: number): string {
  let seed = 7;
  let out = '';
  while (out.length < size) {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    out += (seed >>> 8).toString(16).padStart(6, '0');
  }
  return out.slice(0, size);
}

let n = 0;
function message(
  role: CompactMessage['role'],
  text: string,
  extra: Partial<CompactMessage> = {},
): CompactMessage {
  return {
    id: `m${n}`,
    index: n++,
    role,
    kind: 'message',
    text,
    toolCalls: [],
    toolResults: [],
    format: 'openai-chat',
    raw: {},
    ...extra,
  };
}

/** A short exchange with `text` as a user message, or as a tool output. */
function session(text: string, where: 'user' | 'tool'): CompactMessage[] {
  const head = [message('user', 'Please look at the build failure and tell me what you find.')];
  if (where === 'user') return [...head, message('user', text), message('assistant', 'I will look into it.')];
  return [
    ...head,
    message('assistant', '', {
      toolCalls: [{ id: 'call_0', name: 'bash', arguments: '{"command":"cat build.log"}' }],
    }),
    message('tool', '', { toolResults: [{ callId: 'call_0', output: text }] }),
    message('assistant', 'The log is long; the failure is near the end.'),
  ];
}

function time(messages: CompactMessage[], maxTokens = 2000): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens, countTokens });
    times.push(performance.now() - start);
  }
  return median(times);
}

const cases = [
  { name: '100 KB of one character', text: 'a'.repeat(100_000) },
  { name: '100 KB hex blob', text: hexBlob(100_000) },
  {
    name: '80,000 chars, no space',
    text: Array.from({ length: 80_000 }, (_, k) => 'abcdefghij/._-'[k % 14]).join(''),
  },
];
time(session(ordinary(10_000), 'user')); // warm-up: tokenizer and segmenter load
let ok = true;
console.log('Embedded summarizer, median of 5 runs (maxTokens 2000):');
for (const { name, text } of cases) {
  for (const where of ['user', 'tool'] as const) {
    const pathological = time(session(text, where));
    const baseline = time(session(ordinary(text.length), where));
    const extra = pathological - baseline;
    ok &&= extra <= TARGET_EXTRA_MS;
    console.log(
      `  ${`${name} as ${where === 'user' ? 'a user message' : 'a tool output'}`.padEnd(48)} ${pathological.toFixed(1).padStart(7)} ms   ordinary text of the same size ${baseline.toFixed(1).padStart(7)} ms   extra ${extra.toFixed(1).padStart(7)} ms`,
    );
  }
}
// A ~100k-token agent history: planted sessions back to back.
const codec = MESSAGE_CODECS['openai-chat'];
const history = [1, 2].flatMap((seed) => plantedSession({ seed }).messages);
const parsed = history.map((raw, index) => ({ ...codec.parse(raw, index), id: `h${index}`, index }));
const historyTokens = parsed.reduce(
  (total, m) => total + countTokens(m.text) + m.toolResults.reduce((t, r) => t + countTokens(r.output), 0),
  0,
);
console.log(
  `  ${`agent history, ${parsed.length} messages, ~${Math.round(historyTokens / 1000)}k tokens`.padEnd(48)} ${time(parsed, 8000).toFixed(1).padStart(7)} ms (maxTokens 8000)`,
);
console.log(
  ok
    ? `Target met: every pathological input within ${TARGET_EXTRA_MS} ms of ordinary text.`
    : 'Target missed.',
);

/**
 * `npx tsx bench/split-messages.ts [root]`: the cost of redacting across the seams between
 * adjacent messages (src/core/redaction/message-seams.ts) on 10 MB histories: `redactDeep` over
 * an array of Chat messages (the archived transcript, sync as before) and `redactMessages` (the
 * summarizer's input, in slices: its longest stretch without a turn of the event loop is
 * printed too), messages of 256 characters or 64 KB, clean or every 2nd one ending `password=`.
 * `root` is a tree to measure (an old checkout extracted with `git archive`; default: this one).
 * Prints the median and the minimum of 6 runs of each.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = pathToFileURL(resolve(process.argv[2] ?? new URL('..', import.meta.url).pathname)).href;
type Redactor = (text: string) => string;
const { createRedactor, redactDeep } = (await import(`${root}/src/core/redaction/redactor.ts`)) as {
  createRedactor: () => Redactor;
  redactDeep: <T>(value: T, redact: Redactor) => T;
};
const { redactMessages } = (await import(`${root}/src/core/preflight/cascade/summarize-remainder.ts`)) as {
  redactMessages: (messages: unknown[], redact: Redactor) => Promise<unknown[]>;
};
const redact = createRedactor();
const WORDS = 'the deploy script reads the environment and rolls back on failure while ';
const TEN_MB = 10 * 1024 * 1024;
const body = (size: number) => WORDS.repeat(Math.ceil(size / WORDS.length)).slice(0, size);

function wire(size: number, splitEvery: number): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let total = 0, i = 0; total < TEN_MB; i++) {
    let text = body(size);
    if (splitEvery > 0 && i % splitEvery === 0) text = `${text.slice(0, -30)} password=`;
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: text });
    total += text.length;
  }
  return messages;
}

const parsed = (messages: Record<string, unknown>[]) =>
  messages.map((raw, index) => ({
    id: `m${index}`,
    index,
    role: raw.role,
    kind: 'message',
    text: raw.content,
    toolCalls: [],
    toolResults: [],
    format: 'openai-chat',
    raw,
  }));

/** Runs `work`, measuring its time and the longest gap between two turns of the event loop. */
async function timed(work: () => unknown): Promise<[number, number]> {
  let last = performance.now();
  let longest = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const start = performance.now();
  await work();
  const took = performance.now() - start;
  running = false;
  await new Promise((done) => setImmediate(done));
  return [took, Math.max(longest, performance.now() - last)];
}

const cases: [string, () => unknown][] = [];
for (const [size, every] of [
  [256, 0],
  [256, 2],
  [65_536, 0],
] as const) {
  const raw = wire(size, every);
  const messages = parsed(raw);
  const label = `${raw.length} messages of ${size}${every ? ', every 2nd ends password=' : ''}`;
  cases.push([`redactDeep, ${label}`, () => redactDeep(raw, redact)]);
  cases.push([`redactMessages, ${label}`, () => redactMessages(messages, redact)]);
}
for (const [name, run] of cases) {
  const times: number[] = [];
  const stretches: number[] = [];
  for (let r = 0; r < 6; r++) {
    const [took, longest] = await timed(run);
    times.push(took);
    stretches.push(longest);
  }
  times.sort((a, b) => a - b);
  stretches.sort((a, b) => a - b);
  console.log(
    `${name}: median ${times[3]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)}), longest stretch median ${stretches[3]!.toFixed(0)} ms`,
  );
}

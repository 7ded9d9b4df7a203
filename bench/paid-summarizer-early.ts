/**
 * `npx tsx bench/paid-summarizer-early.ts [calls]` (300 by default): what the cost trigger
 * (`policy.costTrigger`) does to the summarizer calls and the bill of a session whose
 * summarizer is the caller's (an LLM, paid per call), with the trigger on (the default) and
 * off, at 8k, 16k, 32k and 128k windows.
 *
 * The session is test/cost/paid-summarizer-early.test.ts's: one `read_file` round per model
 * call, its output 200 to 3,000 tokens at 128k, scaled to the window (at 8k, 12 to 187 tokens),
 * and 2x and 4x that (at 8k, up to 750 tokens: a few results fill the window); at 128k also a
 * chat (question and answer, nothing to clear). Where a trigger-time compaction summarizes
 * depends on the size of the newest results it keeps and on how deep the summary before it
 * folded, so one row can move by a few calls either way with the phase of the compactions: the
 * sums over the cases are the figure. Each request is priced with bench/cache-cost.ts's prices
 * and prefix-cache model (the messages it shares with the previous request read from the cache,
 * the rest written), and each summarizer call bills its input at 1x and its output at the
 * output multiplier.
 *
 * Issue 47 point 3: early compactions must not add summarizer calls (on <= off). Still over at
 * 16k with outputs 2x and 4x: a summary that folds only down to the target leaves every later
 * trigger to summarize, and the calls the triggers land on (which early clears move) decide
 * when a session falls into that.
 */
import { PrefixCacheTally } from '../src/core/counting/prefix-cache.js';
import { CompactManager } from '../src/core/manager/compact-manager.js';
import type { SummarizeRequest, Summarizer } from '../src/core/summary/summarizer.js';
import {
  codingSessionHead,
  readFileOutput,
  readFileRound,
  scaledOutputTokens,
} from '../test/support/read-file-session.js';
import { messageTokens, PRICES, quarterCounter, tokensOf } from './cache-cost.js';

type Message = Record<string, unknown>;

const output = readFileOutput;

/** One case's figures with the trigger on or off. */
export interface PaidEarlyRow {
  summarizerCalls: number;
  /** Billed-equivalent input (x the base input price), Anthropic and OpenAI multipliers. */
  anthropic: number;
  openai: number;
  earlyCompactions: number;
}

/** The message(s) of call `call` of a session at `window` (tool rounds, or a chat). */
export function paidEarlyStep(call: number, window: number, chat: boolean, scale = 1): Message[] {
  const size = scaledOutputTokens(call, window, scale);
  if (!chat) return readFileRound(call, output(call, size));
  return [
    { role: 'user', content: `Question ${call}: ${output(call, size / 2)}` },
    { role: 'assistant', content: `Answer ${call}: ${output(call, size / 2)}` },
  ];
}

/** Runs `calls` calls at `window` with the cost trigger on (the default) or off. */
export async function paidEarlyRun(
  window: number,
  calls: number,
  chat: boolean,
  costTrigger: boolean,
  scale = 1,
): Promise<PaidEarlyRow> {
  const row: PaidEarlyRow = { summarizerCalls: 0, anthropic: 0, openai: 0, earlyCompactions: 0 };
  const summarizer: Summarizer = {
    name: 'paid',
    async summarize(request: SummarizeRequest) {
      const text = `Summary of ${request.messages.length} messages. Never touch src/generated/.`;
      const input =
        tokensOf(request.previousSummary ?? '') +
        request.messages.reduce(
          (sum, m) => sum + tokensOf(m.text + m.toolResults.map((r) => r.output).join('')),
          0,
        );
      row.summarizerCalls++;
      row.anthropic += input + tokensOf(text) * PRICES.anthropic.output;
      row.openai += input + tokensOf(text) * PRICES.openai.output;
      return { text };
    },
  };
  const manager = new CompactManager({
    model: 'claude-sonnet-4-5',
    maxContextTokens: window,
    tokenCounter: quarterCounter,
    summarizer,
    ...(costTrigger ? {} : { policy: { costTrigger: false } }),
  });
  manager.on('compact.trigger_decision', (event) => {
    if (event.properties.triggered && event.properties.reason === 'growth paid a rewrite')
      row.earlyCompactions++;
  });
  const tally = new PrefixCacheTally(
    { cacheRead: PRICES.anthropic.read, cacheWrite: PRICES.anthropic.write, output: PRICES.anthropic.output },
    (message) => messageTokens(message as Message),
  );
  const history: Message[] = codingSessionHead();
  for (let call = 1; call <= calls; call++) {
    history.push(...paidEarlyStep(call, window, chat, scale));
    const { prefix, total } = tally.add(await manager.preflight('s', history));
    row.anthropic += prefix * PRICES.anthropic.read + (total - prefix) * PRICES.anthropic.write;
    row.openai += prefix * PRICES.openai.read + (total - prefix) * PRICES.openai.write;
  }
  await manager.shutdown();
  return row;
}

/** The cases: tool sessions at 8k, 16k, 32k and 128k (outputs 1x, 2x, 4x), and a chat at 128k. */
export const PAID_EARLY_CASES: readonly { window: number; chat: boolean; scale: number }[] = [
  ...[8_000, 16_000, 32_000, 128_000].flatMap((window) =>
    [1, 2, 4].map((scale) => ({ window, chat: false, scale })),
  ),
  { window: 128_000, chat: true, scale: 1 },
];

/** Runs each case with the trigger on and off; prints and returns the rows. */
export async function runPaidEarlyBench(
  calls = 300,
): Promise<Record<string, { on: PaidEarlyRow; off: PaidEarlyRow }>> {
  const rows: Record<string, { on: PaidEarlyRow; off: PaidEarlyRow }> = {};
  console.log(
    `case (${calls} calls)   | summarizer calls on / off | early compactions | billed Anthropic on / off      | billed OpenAI on / off`,
  );
  const sum = { on: 0, off: 0 };
  for (const { window, chat, scale } of PAID_EARLY_CASES) {
    const on = await paidEarlyRun(window, calls, chat, true, scale);
    const off = await paidEarlyRun(window, calls, chat, false, scale);
    const name = `${window / 1000}k ${chat ? 'chat' : `tools ${scale}x`}`;
    sum.on += on.summarizerCalls;
    sum.off += off.summarizerCalls;
    rows[name] = { on, off };
    const money = (a: number, b: number) =>
      `${Math.round(a).toLocaleString('en')} / ${Math.round(b).toLocaleString('en')} (${(a / b).toFixed(2)}x)`;
    console.log(
      `${name.padEnd(19)} | ${`${on.summarizerCalls} / ${off.summarizerCalls}`.padStart(25)} | ${String(on.earlyCompactions).padStart(16)} | ${money(on.anthropic, off.anthropic).padStart(30)} | ${money(on.openai, off.openai)}`,
    );
  }
  console.log(`summarizer calls, all cases: ${sum.on} with the cost trigger on, ${sum.off} off`);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runPaidEarlyBench(Number(process.argv[2] ?? 300));
}

/**
 * `npx tsx bench/summary-prefix.ts`: what the summarizer calls of one long session bill with
 * today's transcript rendering versus a cached-prefix request (issue 21 point 4), under the
 * prompt-cache model of bench/cache-cost.ts (the same deterministic coding session, the
 * default engine with `clearExcludeTools: ['read_file']` so that every trigger summarizes,
 * characters / 4 tokens).
 *
 * Per summarizer call, billed-equivalent input (x the base input price), output included:
 * - transcript: the strategy prompt with the folded messages rendered into it (tool payloads
 *   shortened to 400 tokens), all input at 1x;
 * - cached prefix, as shipped (`cachedPrefix: { messages: [system] }`): the conversation's
 *   previous request up to its last folded message as the manager hands it over
 *   (`SummarizeRequest.sentPrefix`), then the instruction. The messages it shares with the
 *   conversation's previous request, from the first on, are read at the cache-read price (from
 *   1,024 tokens); the rest of the prefix is written (Anthropic 1.25x, its breakpoint) or read
 *   at 1x (OpenAI); the instruction at 1x. A call the plan refuses is billed as a transcript;
 * - cached prefix, whole view: the conversation's previous request up to its last folded
 *   message, as sent (pinned messages, kept user texts, the summary message, placeholders),
 *   then the instruction, computed here from the requests themselves (a check on the first).
 * Output at the provider's output multiplier in every column.
 */
import { CompactManager } from '../src/core/manager/compact-manager.js';
import type { SummarizeRequest, Summarizer } from '../src/core/summary/summarizer.js';
import { CACHED_PREFIX_HISTORY_NOTE, planCachedPrefix } from '../src/summarizers/cached-prefix.js';
import { buildSummaryPrompt } from '../src/summarizers/prompts/build-summary-prompt.js';
import {
  buildSession,
  INSTRUCTION,
  messageTokens,
  quarterCounter,
  summaryText,
  tokensOf,
} from './cache-cost.js';

type Message = Record<string, unknown>;

const PRICES = {
  anthropic: { read: 0.1, write: 1.25, output: 5 },
  openai: { read: 0.1, write: 1, output: 4 },
};
const MIN_CACHED = 1024;
const SYSTEM: Message = { role: 'system', content: 'You are a coding agent with file and shell tools.' };

interface Bill {
  anthropic: number;
  openai: number;
  input: number;
  cached: number;
}

const zero = (): Bill => ({ anthropic: 0, openai: 0, input: 0, cached: 0 });

/** Bills one request: `prefix` tokens read from the cache, `written` after it, `fresh` at 1x. */
function bill(into: Bill, prefix: number, written: number, fresh: number, output: number): void {
  const read = prefix >= MIN_CACHED ? prefix : 0;
  const rest = written + (prefix - read);
  into.anthropic +=
    read * PRICES.anthropic.read + rest * PRICES.anthropic.write + fresh + output * PRICES.anthropic.output;
  into.openai +=
    read * PRICES.openai.read + rest * PRICES.openai.write + fresh + output * PRICES.openai.output;
  into.input += prefix + written + fresh;
  into.cached += read;
}

/** Tokens of the leading messages `sent` shares with `previous` (JSON-equal, from the first). */
function sharedPrefix(
  sent: readonly Message[],
  previous: readonly Message[],
): { shared: number; total: number } {
  let k = 0;
  while (k < sent.length && k < previous.length && JSON.stringify(sent[k]) === JSON.stringify(previous[k]))
    k++;
  let shared = 0;
  let total = 0;
  sent.forEach((message, i) => {
    const tokens = messageTokens(message);
    total += tokens;
    if (i < k) shared += tokens;
  });
  return { shared, total };
}

export interface SummaryPrefixFigures {
  window: number;
  calls: number;
  summarizerCalls: number;
  /** Calls the shipped plan sent as a prefix (the rest fell back to the transcript). */
  prefixCalls: number;
  fallbacks: Record<string, number>;
  transcript: Bill;
  shipped: Bill;
  wholeView: Bill;
}

/** Runs the default engine over the session and prices its summarizer calls three ways. */
export async function runSummaryPrefixBench(window: number, calls: number): Promise<SummaryPrefixFigures> {
  const session = buildSession(calls);
  const figures: SummaryPrefixFigures = {
    window,
    calls,
    summarizerCalls: 0,
    prefixCalls: 0,
    fallbacks: {},
    transcript: zero(),
    shipped: zero(),
    wholeView: zero(),
  };
  let previous: readonly Message[] = [];
  const summarizer: Summarizer = {
    name: 'billed',
    async summarize(request: SummarizeRequest) {
      const text = summaryText(request.previousSummary, [
        request.keep ?? '',
        ...request.messages.map((m) => m.text + m.toolResults.map((r) => r.output).join('')),
      ]);
      const output = tokensOf(text);
      figures.summarizerCalls++;
      const options = { countTokens: tokensOf };
      const rendered = buildSummaryPrompt(request, options);
      const transcriptInput = tokensOf(rendered.system) + tokensOf(rendered.user);
      bill(figures.transcript, 0, 0, transcriptInput, output);

      const noted = buildSummaryPrompt(request, options, { transcript: CACHED_PREFIX_HISTORY_NOTE });
      const instruction = tokensOf(`${noted.system}\n\n${noted.user}`) + 4;
      const plan = planCachedPrefix(request.messages, 'openai-chat', request.sentPrefix);
      if (plan.ok) {
        figures.prefixCalls++;
        // The summarizer prepends its system message unless the sent prefix opens with it.
        const head = JSON.stringify(plan.messages[0]) === JSON.stringify(SYSTEM) ? [] : [SYSTEM];
        const { shared, total } = sharedPrefix([...head, ...plan.messages], previous);
        bill(figures.shipped, shared, total - shared, instruction, output);
      } else {
        figures.fallbacks[plan.reason] = (figures.fallbacks[plan.reason] ?? 0) + 1;
        bill(figures.shipped, 0, 0, transcriptInput, output);
      }

      // The whole view: the previous request up to its last folded message, as sent.
      const lastRaw = JSON.stringify(request.messages.at(-1)?.raw ?? null);
      const end = previous.findLastIndex((message) => JSON.stringify(message) === lastRaw);
      if (end >= 0) {
        const { shared, total } = sharedPrefix(previous.slice(0, end + 1), previous);
        bill(figures.wholeView, shared, total - shared, instruction, output);
      } else {
        bill(figures.wholeView, 0, 0, transcriptInput, output);
      }
      return { text };
    },
  };
  // The session's one tool is excluded from clearing, so each trigger summarizes (with
  // clearing on, the default engine holds this session without a summarizer call).
  const manager = new CompactManager({
    maxContextTokens: window,
    tokenCounter: quarterCounter,
    summarizer,
    policy: { clearExcludeTools: ['read_file'] },
  });
  const history: Message[] = [SYSTEM, { role: 'user', content: INSTRUCTION }];
  for (const added of session.steps) {
    history.push(...added);
    previous = (await manager.preflight('bench', history)) as Message[];
  }
  await manager.shutdown();
  return figures;
}

function row(name: string, b: Bill, base: Bill): string {
  const ratio = (x: number, y: number) => (y === 0 ? '-' : `${(x / y).toFixed(2)}x`);
  return `${name.padEnd(30)} | ${Math.round(b.anthropic).toLocaleString('en').padStart(16)} (${ratio(b.anthropic, base.anthropic).padStart(5)}) | ${Math.round(b.openai).toLocaleString('en').padStart(13)} (${ratio(b.openai, base.openai).padStart(5)}) | ${Math.round(b.input).toLocaleString('en').padStart(11)} | ${(b.input === 0 ? 0 : (100 * b.cached) / b.input).toFixed(1).padStart(6)}%`;
}

/** Prints the figures at 32k (240 calls) and 128k (300 calls). */
export async function printSummaryPrefixBench(): Promise<SummaryPrefixFigures[]> {
  const all: SummaryPrefixFigures[] = [];
  for (const [window, calls] of [
    [32_000, 240],
    [128_000, 300],
  ] as const) {
    const f = await runSummaryPrefixBench(window, calls);
    all.push(f);
    const fallbacks = Object.entries(f.fallbacks)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ');
    console.log(
      `\n${window.toLocaleString('en')} tokens, ${calls} calls: ${f.summarizerCalls} summarizer calls, ${f.prefixCalls} sent as a prefix by the shipped plan${fallbacks ? ` (fallbacks: ${fallbacks})` : ''}`,
    );
    console.log(
      'summary request                | billed Anthropic         | billed OpenAI         | input       | cached',
    );
    console.log(row('transcript (today)', f.transcript, f.transcript));
    console.log(row('cached prefix, as shipped', f.shipped, f.transcript));
    console.log(row('cached prefix, whole view', f.wholeView, f.transcript));
  }
  return all;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await printSummaryPrefixBench();
}

/**
 * `npm run bench -- --cost` (or `npx tsx bench/cache-cost.ts`): what a long tool-heavy coding
 * session bills under prompt caching, for this library's default engine and its peers' plain
 * strategies, all held to the same window, in one run.
 *
 * The session: one opening request with a constraint, a short user message naming a ticket
 * every 40 calls, and one tool call per model call with outputs of 200 to 3,000 tokens
 * (deterministic). Each strategy turns the history into the request of every call; a
 * prefix-cache model prices it: the messages it shares with the previous request are read
 * from the cache (Anthropic: from 1,024 tokens, the rest written at 1.25x; OpenAI: from 1,024
 * tokens, the rest at 1x), and a summarizer call is billed too (its input at 1x, its output at
 * the output multiplier). Tokens are characters / 4 for every strategy alike.
 *
 * The default row passes the billed summarizer below (a summarizer of the caller's: the cost
 * trigger's early compactions then only clear); the built-in row runs the defaults as a manager
 * without `summarizer` does (the built-in summarizer), its calls billed as an LLM's. Beside
 * them, the cost preset (`policy.preset: 'cost'`). `BENCH_POLICY` (JSON, e.g.
 * `{"triggerPct":0.6}`) sets the default row's policy to try others. The issue's best bounded
 * peer is LangChain's summarization middleware keeping 8 messages (issue 47); the default's
 * ratio to it is printed under each table.
 *
 * Columns: billed-equivalent input (x the base input price) with Anthropic and with OpenAI
 * multipliers, the cache-hit share, prefix rewrites (a request that does not extend the
 * previous one), summarizer calls, the share of requests that still hold every thing the
 * user asked to keep (the instruction and each ticket named so far), the recent context (tokens
 * of the newest messages sent exactly as the history holds them: mean and least over the
 * requests), and requests over the window.
 */

import { PrefixCacheTally } from '../src/core/counting/prefix-cache.js';
import type { TokenCounter } from '../src/core/counting/token-counter.js';
import { CompactManager } from '../src/core/manager/compact-manager.js';
import type { CompactMessage } from '../src/core/messages/message.js';
import type { PolicyPreset } from '../src/core/policy.js';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../src/core/summary/summarizer.js';

type Message = Record<string, unknown>;
export const tokensOf = (text: string) => Math.ceil(text.length / 4);
/** A message's tokens as the engine's counter below sees them: its text, calls and results. */
export const messageTokens = (message: Message) => {
  const calls = (message.tool_calls as { function: { name: string; arguments: string } }[] | undefined) ?? [];
  const text = typeof message.content === 'string' ? message.content : '';
  return tokensOf(text + calls.map((c) => c.function.name + c.function.arguments).join('')) + 4;
};

/** The counter every strategy uses (characters / 4), so that the engine and the model agree. */
export const quarterCounter: TokenCounter = {
  name: 'quarter-chars',
  exact: true,
  requestOverhead: 0,
  countText: tokensOf,
  countMessage: (m: CompactMessage) =>
    tokensOf(
      m.text +
        m.toolCalls.map((c) => c.name + c.arguments).join('') +
        m.toolResults.map((r) => r.output).join(''),
    ) + 4,
  countTools: (tools) => tokensOf(JSON.stringify(tools)),
};

export const INSTRUCTION =
  'Refactor the billing module to the new invoice API. Never edit files under src/generated/, they are produced by codegen.';
const SUMMARY_TOKENS = 800;
/** Every strategy's request opens so: the system prompt and the opening request. */
const HEAD: readonly Message[] = [
  { role: 'system', content: 'You are a coding agent with file and shell tools.' },
  { role: 'user', content: INSTRUCTION },
];

/** A deterministic word stream. */
function words(seed: number, tokens: number): string {
  const vocabulary =
    'alpha beta gamma delta const let return await async import export function class type'.split(' ');
  let x = (seed * 2654435761) >>> 0;
  const out: string[] = [];
  let chars = 0;
  while (chars < tokens * 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = `${vocabulary[x % vocabulary.length]}${x % 97}`;
    out.push(word);
    chars += word.length + 1;
  }
  return out.join(' ');
}

/** The session's history after `calls` model calls, and what the user asked to keep by then. */
export function buildSession(calls: number): { steps: Message[][]; keep: string[][] } {
  const steps: Message[][] = [];
  const keep: string[][] = [];
  const asked = ['src/generated/'];
  for (let call = 1; call <= calls; call++) {
    const added: Message[] = [];
    if (call % 40 === 0) {
      const id = `BILL-${100 + call / 40}`;
      asked.push(id);
      added.push({
        role: 'user',
        content: `Keep ticket ${id} in mind: its fix must ship with this refactor.`,
      });
    }
    const size = 200 + ((call * 7919) % 2800);
    added.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${call}`,
          type: 'function',
          function: {
            name: 'read_file',
            arguments: JSON.stringify({ path: `src/billing/module_${call % 37}.ts` }),
          },
        },
      ],
    });
    added.push({ role: 'tool', tool_call_id: `call_${call}`, content: words(call, size) });
    steps.push(added);
    keep.push([...asked]);
  }
  return { steps, keep };
}

interface Priced {
  anthropic: number;
  /**
   * Recent context: the newest messages a request sends exactly as the history holds them.
   * Their mean tokens over the requests, and the least number of them in a request after the
   * strategy's first rewrite (the peer keeps 8 messages).
   */
  recentMean: number;
  recentMin: number;
  openai: number;
  input: number;
  cached: number;
  rewrites: number;
  summarizerCalls: number;
  kept: number;
  over: number;
  requests: number;
}

export const PRICES = {
  anthropic: { read: 0.1, write: 1.25, output: 5 },
  openai: { read: 0.1, write: 1, output: 4 },
};

/**
 * Prices each request against the previous one (the prefix they share is a cache hit, as the
 * library's own model for `replay` counts it), for both providers at once.
 */
class CacheModel {
  readonly #tally = new PrefixCacheTally(
    { cacheRead: PRICES.anthropic.read, cacheWrite: PRICES.anthropic.write, output: PRICES.anthropic.output },
    (message) => messageTokens(message as Message),
  );
  readonly priced: Priced = {
    anthropic: 0,
    recentMean: 0,
    recentMin: Number.POSITIVE_INFINITY,
    openai: 0,
    input: 0,
    cached: 0,
    rewrites: 0,
    summarizerCalls: 0,
    kept: 0,
    over: 0,
    requests: 0,
  };

  /** The whole conversation up to the call priced last (the session's steps appended). */
  readonly #history: Message[] = [];

  constructor(
    readonly window: number,
    readonly session: ReturnType<typeof buildSession>,
  ) {}

  /**
   * Prices the request of call `k` of the session (0-based), which must hold what the user
   * asked to keep by then; the newest messages it sends exactly as the history holds them are
   * its recent context.
   */
  request(messages: readonly Message[], call: number): void {
    const history = this.#grow(call);
    const keep = this.session.keep[call]!;
    const { prefix, total, rewrote } = this.#tally.add(messages);
    let recent = 0;
    let count = 0;
    for (let k = 1; k <= Math.min(messages.length, history.length); k++) {
      const sent = messages[messages.length - k]!;
      const original = history[history.length - k]!;
      if (sent !== original && JSON.stringify(sent) !== JSON.stringify(original)) break;
      recent += messageTokens(original);
      count = k;
    }
    this.priced.recentMean += recent;
    if (this.priced.rewrites > 0 || rewrote) this.priced.recentMin = Math.min(this.priced.recentMin, count);
    if (rewrote) this.priced.rewrites++;
    const rest = total - prefix;
    this.priced.anthropic += prefix * PRICES.anthropic.read + rest * PRICES.anthropic.write;
    this.priced.openai += prefix * PRICES.openai.read + rest * PRICES.openai.write;
    this.priced.input += total;
    this.priced.cached += prefix;
    this.priced.requests++;
    if (total > this.window) this.priced.over++;
    const joined = JSON.stringify(messages);
    if (keep.every((thing) => joined.includes(thing))) this.priced.kept++;
  }

  #grow(call: number): Message[] {
    if (this.#history.length === 0) this.#history.push(...HEAD);
    this.#history.push(...this.session.steps[call]!);
    return this.#history;
  }

  /** A summarizer call: input at 1x, output at each provider's output multiplier. */
  summarizer(inputTokens: number, outputTokens: number): void {
    this.priced.summarizerCalls++;
    this.priced.anthropic += inputTokens + outputTokens * PRICES.anthropic.output;
    this.priced.openai += inputTokens + outputTokens * PRICES.openai.output;
  }
}

/** A summary that keeps what the user asked (a careful LLM would), about SUMMARY_TOKENS long. */
export function summaryText(previous: string | undefined, texts: readonly string[]): string {
  const asked = new Set<string>();
  for (const text of [previous ?? '', ...texts]) {
    if (text.includes('src/generated/')) asked.add(INSTRUCTION);
    for (const id of text.match(/BILL-\d+/g) ?? []) asked.add(`Keep ticket ${id} in mind.`);
  }
  return [...asked, words(asked.size + texts.length, SUMMARY_TOKENS - 60)].join('\n');
}

/** This library's engine with an LLM-like summarizer whose calls are billed. */
async function engine(
  window: number,
  session: ReturnType<typeof buildSession>,
  model: CacheModel,
  knobs: { preset?: PolicyPreset; triggerPct?: number; targetPct?: number } = {},
  builtIn = false,
): Promise<void> {
  const billed: Summarizer = {
    name: 'billed',
    async summarize(request: SummarizeRequest) {
      const input = request.messages.reduce(
        (sum, m) => sum + tokensOf(m.text + m.toolResults.map((r) => r.output).join('')),
        0,
      );
      const text = summaryText(request.previousSummary, [
        request.keep ?? '',
        ...request.messages.map((m) => m.text + m.toolResults.map((r) => r.output).join('')),
      ]);
      model.summarizer(input + tokensOf(request.previousSummary ?? ''), tokensOf(text));
      return { text };
    },
  };
  const summarizer = builtIn ? new BilledEmbeddedSummarizer(model) : billed;
  // BENCH_POLICY (JSON) tries other settings on the default row.
  const policy = knobs.preset ? knobs : { ...knobs, ...JSON.parse(process.env.BENCH_POLICY ?? '{}') };
  const manager = new CompactManager({
    // Priced as the model is: cache reads at 0.1x, writes at 1.25x (BENCH_MODEL to try another).
    model: process.env.BENCH_MODEL ?? 'claude-sonnet-4-5',
    maxContextTokens: window,
    tokenCounter: quarterCounter,
    summarizer,
    policy,
  });
  const history: Message[] = [
    { role: 'system', content: 'You are a coding agent with file and shell tools.' },
    { role: 'user', content: INSTRUCTION },
  ];
  for (const [k, added] of session.steps.entries()) {
    history.push(...added);
    model.request(await manager.preflight('bench', history), k);
  }
  await manager.shutdown();
}

/**
 * The built-in summarizer (what a manager without `summarizer` uses), its calls billed as an
 * LLM's would be (input at 1x, output at the output price) though it runs in the process for
 * free (an early compaction may summarize with it: it costs no call).
 */
class BilledEmbeddedSummarizer extends EmbeddedSummarizer {
  constructor(readonly model: CacheModel) {
    super();
  }

  override async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    const result = await super.summarize(request);
    const input = request.messages.reduce(
      (sum, m) => sum + tokensOf(m.text + m.toolResults.map((r) => r.output).join('')),
      0,
    );
    this.model.summarizer(input + tokensOf(request.previousSummary ?? ''), tokensOf(result.text));
    return result;
  }
}

/** Summarize at the trigger (LangChain's summarization middleware): all but the newest 30% of the window. */
function summarizeAtTrigger(
  window: number,
  session: ReturnType<typeof buildSession>,
  model: CacheModel,
): void {
  const head: Message[] = [
    { role: 'system', content: 'You are a coding agent with file and shell tools.' },
    { role: 'user', content: INSTRUCTION },
  ];
  let view: Message[] = [...head];
  let previous: string | undefined;
  for (const [k, added] of session.steps.entries()) {
    view.push(...added);
    const total = view.reduce((sum, m) => sum + messageTokens(m), 0);
    if (total > window * 0.85) {
      // Keep the newest messages up to 30% of the window (LangChain's `keep: ('fraction', 0.3)`).
      let cut = view.length;
      let kept = 0;
      while (cut > 2 && kept + messageTokens(view[cut - 1]!) <= window * 0.3)
        kept += messageTokens(view[--cut]!);
      while (cut < view.length && view[cut]!.role === 'tool') cut++;
      const folded = view.slice(1, cut).map((m) => JSON.stringify(m));
      const text = summaryText(previous, folded);
      model.summarizer(
        folded.reduce((sum, t) => sum + tokensOf(t), 0),
        tokensOf(text),
      );
      previous = text;
      view = [
        head[0]!,
        { role: 'user', content: `Summary of the conversation so far:\n${text}` },
        ...view.slice(cut),
      ];
    }
    model.request(view, k);
  }
}

/**
 * LangChain's `summarizationMiddleware` with `keep: { messages: 8 }` (the issue's best bounded
 * peer): past the trigger (0.85 of the window, as the other peers), every message but the newest
 * 8 (moved back so that no tool result loses its call) is replaced by ONE human message
 * "Here is a summary of the conversation to date:" (the system prompt stays). Its summarizer
 * sees the folded messages trimmed to their newest 4,000 tokens (`trimTokensToSummarize`'s
 * default, strategy 'last', partial allowed), and is billed for those.
 */
function summarizeKeepMessages(
  window: number,
  session: ReturnType<typeof buildSession>,
  model: CacheModel,
  trimTokens = Number.POSITIVE_INFINITY,
  keepMessages = 8,
): void {
  let view: Message[] = [...HEAD];
  for (const [k, added] of session.steps.entries()) {
    view.push(...added);
    const total = view.reduce((sum, m) => sum + messageTokens(m), 0);
    if (total > window * 0.85) {
      let cut = Math.max(1, view.length - keepMessages);
      while (cut > 1 && view[cut]!.role === 'tool') cut--;
      const folded = view.slice(1, cut).map((m) => JSON.stringify(m));
      // The newest 4,000 tokens of the folded messages (the oldest one seen in part).
      const seen: string[] = [];
      let room = trimTokens;
      for (let i = folded.length - 1; i >= 0 && room > 0; i--) {
        const text = folded[i]!.length > room * 4 ? folded[i]!.slice(-room * 4) : folded[i]!;
        seen.unshift(text);
        room -= tokensOf(text);
      }
      const text = summaryText(undefined, seen);
      model.summarizer(
        seen.reduce((sum, t) => sum + tokensOf(t), 0),
        tokensOf(text),
      );
      view = [
        view[0]!,
        { role: 'user', content: `Here is a summary of the conversation to date:\n\n${text}` },
        ...view.slice(cut),
      ];
    }
    model.request(view, k);
  }
}

/** Anthropic's clear_tool_uses: past the trigger, clear old tool results (keep 3), at least 5,000 tokens. */
function clearToolUses(window: number, session: ReturnType<typeof buildSession>, model: CacheModel): void {
  const view: Message[] = [
    { role: 'system', content: 'You are a coding agent with file and shell tools.' },
    { role: 'user', content: INSTRUCTION },
  ];
  for (const [k, added] of session.steps.entries()) {
    view.push(...added);
    const total = view.reduce((sum, m) => sum + messageTokens(m), 0);
    if (total > window * 0.85) {
      const results = view.flatMap((m, i) => (m.role === 'tool' && m.content !== '[cleared]' ? [i] : []));
      const clearable = results.slice(0, Math.max(0, results.length - 3));
      const freed = clearable.reduce((sum, i) => sum + messageTokens(view[i]!) - 8, 0);
      if (freed >= 5_000) for (const i of clearable) view[i] = { ...view[i]!, content: '[cleared]' };
    }
    model.request(view, k);
  }
}

/** A sliding window: past the trigger, drop the oldest turns down to half the window. */
function slidingWindow(window: number, session: ReturnType<typeof buildSession>, model: CacheModel): void {
  let view: Message[] = [
    { role: 'system', content: 'You are a coding agent with file and shell tools.' },
    { role: 'user', content: INSTRUCTION },
  ];
  for (const [k, added] of session.steps.entries()) {
    view.push(...added);
    let total = view.reduce((sum, m) => sum + messageTokens(m), 0);
    if (total > window * 0.85) {
      let cut = 1;
      while (cut < view.length - 2 && total > window * 0.5) total -= messageTokens(view[cut++]!);
      while (cut < view.length && view[cut]!.role === 'tool') total -= messageTokens(view[cut++]!);
      view = [view[0]!, ...view.slice(cut)];
    }
    model.request(view, k);
  }
}

function noCompaction(session: ReturnType<typeof buildSession>, model: CacheModel): void {
  const view: Message[] = [
    { role: 'system', content: 'You are a coding agent with file and shell tools.' },
    { role: 'user', content: INSTRUCTION },
  ];
  for (const [k, added] of session.steps.entries()) {
    view.push(...added);
    model.request(view, k);
  }
}

/** The issue's best bounded peer (issue 47): LangChain's summarization middleware keeping 8 messages. */
export const PEER = 'summarize, keep 8 messages';
export const DEFAULT_ROW = 'agent-compaction (default)';
export const BUILT_IN_ROW = 'default, built-in summarizer';
export const COST_ROW = "agent-compaction, preset 'cost'";

/**
 * The least any strategy can bill: every new message written to the cache once and nothing
 * ever read back (no strategy sends less and still sends each message once). Printed beside
 * each row's ratio to the best bounded peer (issue 47's goal: the default at most 0.8x it).
 */
function printRatios(
  key: string,
  session: ReturnType<typeof buildSession>,
  rows: Record<string, CostRow>,
): void {
  const fresh = session.steps.flat().reduce((sum, message) => sum + messageTokens(message), 0);
  const peer = rows[`${key}:${PEER}`]!;
  for (const provider of ['anthropic', 'openai'] as const) {
    const floor = fresh * PRICES[provider].write;
    const ours = rows[`${key}:${DEFAULT_ROW}`]!;
    const preset = rows[`${key}:${COST_ROW}`]!;
    const builtIn = rows[`${key}:${BUILT_IN_ROW}`]!;
    console.log(
      `${provider}: floor ${Math.round(floor).toLocaleString('en')}; peer (${PEER}) ${Math.round(peer[provider]).toLocaleString('en')}; default ${(ours[provider] / peer[provider]).toFixed(2)}x the peer (goal <= 0.8x: ${ours[provider] <= 0.8 * peer[provider] ? 'met' : 'MISSED'}), ${(ours[provider] / floor).toFixed(2)}x the floor; with the built-in summarizer ${(builtIn[provider] / peer[provider]).toFixed(2)}x; preset 'cost' ${(preset[provider] / peer[provider]).toFixed(2)}x the peer`,
    );
  }
}

/** One strategy's priced session (key `window[/calls]:strategy`). */
export type CostRow = Priced & { window: number; calls: number };

/** The issue's cases: 240 calls at 32k and 128k, and 400 calls at 128k. */
export const COST_CASES: readonly { window: number; calls: number }[] = [
  { window: 32_000, calls: 240 },
  { window: 128_000, calls: 240 },
  { window: 128_000, calls: 400 },
];

/** Runs every strategy at each window; returns the rows and prints the table. */
export async function runCacheCostBench(
  cases: readonly { window: number; calls: number }[] = COST_CASES,
): Promise<Record<string, CostRow>> {
  const rows: Record<string, CostRow> = {};
  for (const { window, calls } of cases) {
    const session = buildSession(calls);
    const key = calls === 240 ? `${window}` : `${window}/${calls}`;
    const strategies: [string, (model: CacheModel) => Promise<void> | void][] = [
      [DEFAULT_ROW, (m) => engine(window, session, m)],
      // The defaults as a manager without `summarizer` runs them (the cost trigger on).
      [BUILT_IN_ROW, (m) => engine(window, session, m, {}, true)],
      // The cost preset (policy.preset 'cost').
      [COST_ROW, (m) => engine(window, session, m, { preset: 'cost' })],
      [PEER, (m) => summarizeKeepMessages(window, session, m)],
      [`${PEER}, trimmed`, (m) => summarizeKeepMessages(window, session, m, 4_000)],
      ['summarize at trigger, keep 30%', (m) => summarizeAtTrigger(window, session, m)],
      ['clear_tool_uses', (m) => clearToolUses(window, session, m)],
      ['sliding window', (m) => slidingWindow(window, session, m)],
      ['no compaction', (m) => noCompaction(session, m)],
    ];
    console.log(`\n${window.toLocaleString('en')} tokens, ${calls} calls`);
    console.log(
      'strategy                          | billed Anthropic | billed OpenAI | hit share | rewrites | summarizer calls | asked kept | recent tokens / least msgs | over window',
    );
    for (const [name, run] of strategies) {
      const model = new CacheModel(window, session);
      await run(model);
      const p = model.priced;
      const row: CostRow = {
        ...p,
        anthropic: Math.round(p.anthropic),
        openai: Math.round(p.openai),
        recentMean: Math.round(p.recentMean / p.requests),
        window,
        calls,
      };
      rows[`${key}:${name}`] = row;
      console.log(
        `${name.padEnd(33)} | ${row.anthropic.toLocaleString('en').padStart(16)} | ${row.openai.toLocaleString('en').padStart(13)} | ${((100 * p.cached) / p.input).toFixed(1).padStart(8)}% | ${String(p.rewrites).padStart(8)} | ${String(p.summarizerCalls).padStart(16)} | ${((100 * p.kept) / p.requests).toFixed(1).padStart(9)}% | ${`${row.recentMean.toLocaleString('en')} / ${Number.isFinite(row.recentMin) ? row.recentMin : '-'}`.padStart(19)} | ${String(p.over).padStart(11)}`,
      );
    }
    printRatios(key, session, rows);
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runCacheCostBench();
}

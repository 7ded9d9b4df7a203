/**
 * How the compacted request of `real-chat-facts.ts` fills its room (issue 45, point 3): each
 * conversation compacted rolling at 1/`ratio` with the default policy and the built-in
 * summarizer, wrapped to record the limit each summary was given (`maxTokens`, the room the
 * plan gives it under the target) and what it wrote. Per conversation:
 *
 * - summary fill: the mean summary tokens / its limit over the compactions that summarized;
 * - target fill: the mean tokensAfter / target of those compactions (the whole request);
 * - at the end: the last request's tokens / the window, split into summary and verbatim
 *   turns, and the sliding window the figures compare with (the same token size as the
 *   whole last request, not as the context window).
 *
 * `npx tsx eval/real-chat-fill.ts [--set tune|held-out|all] [--ratio 8]`
 */
import { parseArgs } from 'node:util';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { EmbeddedSummarizer } from '../src/core/summary/embedded/index.js';
import type { SummarizeRequest, SummarizeResult } from '../src/core/summary/summarizer.js';
import { loadRealChat, locomoSet, type RealChat } from './real-chat-facts.js';
import { rollRealChat } from './roll-real-chat.js';

/**
 * The built-in summarizer, recording each limit it is given and the tokens it writes (a
 * subclass: the manager gives the built-in summarizer the room under the target).
 */
class RecordingSummarizer extends EmbeddedSummarizer {
  readonly calls: { maxTokens: number; tokens: number }[] = [];
  override async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    const result = await super.summarize(request);
    this.calls.push({ maxTokens: request.maxTokens, tokens: request.countTokens(result.text) });
    return result;
  }
}

/** What one conversation's room looked like. */
export interface FillRun {
  name: string;
  window: number;
  target: number;
  summaries: number;
  /** Mean summary tokens / its limit. */
  summaryFill: number;
  /** Mean limit given to the summary / target. */
  summaryShare: number;
  /** Mean tokensAfter / target of the compactions that summarized. */
  targetFill: number;
  lastTokens: number;
  lastSummaryTokens: number;
  /** Each summary's limit and tokens, in order. */
  calls: { maxTokens: number; tokens: number }[];
}

/** Compacts one conversation rolling at 1/`ratio` and records its fill. */
export async function fillRun(chat: RealChat, ratio = 8): Promise<FillRun> {
  const summarizer = new RecordingSummarizer();
  let target = 0;
  let seen = 0;
  const fills: number[] = [];
  const { window, last } = await rollRealChat(chat, ratio, {
    summarizer,
    onManager: (manager) =>
      manager.on('compact.trigger_decision', (event) => {
        target = event.properties.targetTokens ?? target;
      }),
    onCompact: (result) => {
      if (result.applied && summarizer.calls.length > seen && target > 0)
        fills.push(result.tokensAfter / target);
      seen = summarizer.calls.length;
    },
  });
  const counter = tokenCounterFor('gpt-4o');
  const mean = (xs: number[]) => (xs.length > 0 ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    name: chat.name,
    window,
    target,
    summaries: summarizer.calls.length,
    summaryFill: mean(summarizer.calls.map((c) => c.tokens / Math.max(1, c.maxTokens))),
    summaryShare: mean(summarizer.calls.map((c) => c.maxTokens / Math.max(1, target))),
    targetFill: mean(fills),
    lastTokens: last.tokensAfter,
    lastSummaryTokens: counter.countText(last.summary?.text ?? ''),
    calls: summarizer.calls,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { set: { type: 'string', default: 'held-out' }, ratio: { type: 'string', default: '8' } },
  });
  const ids = locomoSet(values.set);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(
    'conversation  window  target  summaries  summary/limit  limit/target  after/target  last/window  last summary/last',
  );
  for (const id of ids) {
    const r = await fillRun(loadRealChat(id), Number(values.ratio));
    console.log(
      `${r.name.padEnd(12)}  ${String(r.window).padStart(6)}  ${String(r.target).padStart(6)}  ${String(r.summaries).padStart(9)}  ${pct(r.summaryFill).padStart(13)}  ${pct(r.summaryShare).padStart(12)}  ${pct(r.targetFill).padStart(12)}  ${pct(r.lastTokens / r.window).padStart(11)}  ${pct(r.lastSummaryTokens / Math.max(1, r.lastTokens)).padStart(17)}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();

/**
 * Compaction without the manager: the summarizer folds the older messages and the latest
 * ones stay verbatim, once (`direct`) or as the history grows (`direct-rolling`, the previous
 * summary merged each time). It measures the summarizer alone, whatever the pipeline around
 * it does first (clearing old tool results, for one).
 */

import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import type { CompactManager } from '../src/core/manager/compact-manager.js';
import { MESSAGE_CODECS } from '../src/core/messages/formats/detect-format.js';
import { type CompactMessage, formatSummaryText } from '../src/core/messages/message.js';
import type { Summarizer } from '../src/core/summary/summarizer.js';
import { slidingWindow, tally } from './context-measures.js';
import type { FidelityRun, RunConfig } from './fidelity-run.js';

/** Options of {@link compactDirect}. */
export interface DirectOptions {
  /** The history (OpenAI Chat), oldest first. */
  messages: readonly Record<string, unknown>[];
  /** Tokens for everything but the system messages. */
  budget: number;
  /** Share of `budget` for the summary; the rest holds the latest messages. */
  share: number;
  summarizer: Summarizer;
  rolling: boolean;
  countTokens: (text: string) => number;
  /** Tokens of a list of wire messages, as the manager counts them. */
  estimate: (messages: Record<string, unknown>[]) => number;
}

/** What {@link compactDirect} produced. */
export interface DirectResult {
  /** System messages, the summary message, the verbatim tail. */
  output: Record<string, unknown>[];
  /** Tokens of `output` without the system messages. */
  contextTokens: number;
  summaryTokens: number;
  compactions: number;
  /** Indices (in `messages`) of the messages folded into the summary. */
  folded: Set<number>;
}

/** Where the verbatim tail starts: the longest suffix of `[from, end)` within `room` tokens, not opening on a tool result. */
function tailStart(
  sizes: readonly number[],
  from: number,
  end: number,
  room: number,
  roles: readonly string[],
): number {
  let start = end;
  let used = 0;
  while (start > from && used + sizes[start - 1]! <= room) used += sizes[--start]!;
  while (start < end && roles[start] === 'tool') start++;
  return start;
}

/** Compacts `messages` with the summarizer alone (see the module comment). */
export async function compactDirect(options: DirectOptions): Promise<DirectResult> {
  const codec = MESSAGE_CODECS['openai-chat'];
  const pinned = options.messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const indices = options.messages.flatMap((m, i) =>
    m.role === 'system' || m.role === 'developer' ? [] : [i],
  );
  const rest = indices.map((i) => options.messages[i]!);
  const parsed: CompactMessage[] = rest.map((m, k) => ({
    ...codec.parse(m, indices[k]!),
    id: `raw-${indices[k]}`,
    index: indices[k]!,
  }));
  const sizes = rest.map((m) => options.estimate([m]));
  const roles = rest.map((m) => String(m.role));
  const summaryMax = Math.max(16, Math.floor(options.budget * options.share));
  let summary = '';
  let summaryTokens = 0;
  let start = 0;
  let compactions = 0;
  const fold = async (end: number) => {
    const cut = tailStart(sizes, start, end, options.budget - summaryMax, roles);
    if (cut <= start) return;
    summary = await options.summarizer
      .summarize({
        sessionId: 'direct',
        strategy: 'task_state',
        messages: parsed.slice(start, cut),
        ...(summary ? { previousSummary: summary } : {}),
        maxTokens: summaryMax,
        countTokens: options.countTokens,
      })
      .then((r) => r.text);
    compactions++;
    summaryTokens = summary
      ? options.estimate([
          codec.summaryMessage(formatSummaryText(compactions, summary)) as Record<string, unknown>,
        ])
      : 0;
    start = cut;
  };
  const used = (end: number) => summaryTokens + sizes.slice(start, end).reduce((n, s) => n + s, 0);
  if (options.rolling) {
    for (let end = 1; end < rest.length; end++)
      if (roles[end] === 'assistant' && used(end) > options.budget * 0.85) await fold(end);
  }
  if (used(rest.length) > options.budget) await fold(rest.length);
  const summaryMessages = summary
    ? [codec.summaryMessage(formatSummaryText(compactions, summary)) as Record<string, unknown>]
    : [];
  const output = [...pinned, ...summaryMessages, ...rest.slice(start)];
  return {
    output,
    contextTokens: used(rest.length),
    summaryTokens,
    compactions,
    folded: new Set(indices.slice(0, start)),
  };
}

/** One `direct` or `direct-rolling` run of the fidelity harness. */
export async function directRun(
  config: RunConfig,
  sizes: {
    rawTokens: number;
    pinnedTokens: number;
    contextBudget: number;
    probe: CompactManager;
  },
): Promise<FidelityRun> {
  const { probe, pinnedTokens } = sizes;
  const counter = tokenCounterFor(config.model);
  const result = await compactDirect({
    messages: config.session.messages,
    budget: sizes.contextBudget - pinnedTokens,
    share: config.share,
    summarizer: config.under.summarizer,
    rolling: config.mode === 'direct-rolling',
    countTokens: (text) => counter.countText(text),
    estimate: (messages) => probe.estimate(messages).total,
  });
  const contextTokens = pinnedTokens + result.contextTokens;
  const window = slidingWindow(config.session.messages, contextTokens, (m) => probe.estimate(m).total);
  return {
    set: config.set,
    session: config.session.name,
    strategy: config.strategy,
    summarizer: config.under.label,
    mode: config.mode,
    targetRatio: config.ratio,
    rawTokens: sizes.rawTokens,
    contextTokens,
    pinnedTokens,
    ratio: (sizes.rawTokens - pinnedTokens) / Math.max(1, result.contextTokens),
    summaryTokens: result.summaryTokens,
    maxSummaryTokens: Math.floor((sizes.contextBudget - pinnedTokens) * config.share),
    compactions: result.compactions,
    facts: config.session.facts.length,
    ...tally(config.session, result.output, window, (index) => result.folded.has(index)),
    errors: 0,
  };
}

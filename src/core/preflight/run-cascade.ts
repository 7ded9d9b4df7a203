/**
 * Step 5: the reduction cascade, cheapest and most faithful first; each level stops as soon
 * as the request is under the target:
 *   a. clear old tool results (placeholders)          cascade/clear-tool-results.ts
 *   b. shorten old, large call arguments               cascade/shorten-arguments.ts
 *   c. summarize the units before the verbatim suffix  cascade/plan-summary.ts, summarize-remainder.ts
 *   d. cut an oversized message of the suffix          cascade/cut-oversized.ts
 * Levels a and b need no summarizer, so many triggers end before any LLM call.
 */

import type { Positional } from '../chunked-list.js';
import type { TokenCounter } from '../counting/token-counter.js';
import { CompactError } from '../errors.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import type { CompactMessage } from '../messages/message.js';
import { type IndexedMessage, toCompactMessage } from '../messages/message-index.js';
import type { ToolPairer } from '../messages/tool-pairing.js';
import type { CompactPolicy } from '../policy.js';
import { cutOuterSeams } from '../redaction/message-seams.js';
import type { Redactor } from '../redaction/redactor.js';
import type { SessionRewrite } from '../session/session-store.js';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import type { SentPrefix } from '../summary/summarizer.js';
import { mapSliced, runStepsYielding, type Steps, TimeSlice } from '../time-slice.js';
import { type CascadeRun, cascadeRun, type LevelReport, type NewRewrite } from './cascade/cascade-types.js';
import { clearToolResultSteps } from './cascade/clear-tool-results.js';
import { cutOversizedSteps } from './cascade/cut-oversized.js';
import { giveWaySteps } from './cascade/give-way.js';
import { planSummarySteps, splitFolded } from './cascade/plan-summary.js';
import { shortenArgumentSteps } from './cascade/shorten-arguments.js';
import {
  type SummarizeContext,
  type SummarizeOutcome,
  summarizeWithFallback,
  withKnownCounts,
} from './cascade/summarize-remainder.js';
import { trimSummaryLines } from './cascade/trim-summary-lines.js';
import type { Decision } from './decide.js';
import { sentPrefixSteps } from './outcome/sent-prefix.js';
import type { RealizedRewrite, SessionView, ViewEntry } from './view/session-view.js';

/** What the cascade needs. */
export interface CascadeInput {
  readonly sessionId: string;
  readonly view: SessionView;
  readonly pairing: { readonly pairer: ToolPairer; readonly items: Positional<IndexedMessage> };
  readonly policy: Readonly<CompactPolicy>;
  readonly decision: Decision;
  /** Tokens of the request as it stands (system, tools, overhead, view, summary). */
  readonly tokensBefore: number;
  /** Tokens of the current summary message (0 without one). */
  readonly summaryTokens: number;
  /** The current summary message as the last request sent it (cached-prefix summarizers). */
  readonly summaryWire?: unknown;
  readonly force: boolean;
  readonly codec: MessageCodec;
  readonly counter: TokenCounter;
  readonly realize: (item: IndexedMessage, rewrite: SessionRewrite) => RealizedRewrite;
  readonly summarize: SummarizeContext;
  /** Rejects a summarizer's output (returns why), e.g. a refusal. */
  readonly checkSummary: (text: string, strategy: string) => string | undefined;
  /** The summary message text of `body` at `version`, tagged and marked for the session. */
  readonly formatSummary: (version: number, body: string) => string;
  /** A line naming where the folded messages are archived, added to the summary (when archiving). */
  readonly archiveLine?: (version: number) => string | undefined;
  readonly signal?: AbortSignal;
  readonly note?: string;
  readonly agent?: string;
  /** The request shows an AI assistant on the other side (see `SummarizeRequest.withAssistant`). */
  readonly withAssistant?: boolean;
}

/** What the cascade did. */
export interface CascadeResult {
  /** The view after the cascade (pinned and the verbatim suffix), rewrites applied. */
  entries: ViewEntry[];
  /** The new summary (body and version), when level c ran. */
  summary?: { body: string; version: number; summarizer: string; fallback?: string; tokens: number };
  /** Messages folded into the summary (or pruned) by this run, in history order. */
  folded: IndexedMessage[];
  /** Rewrites made by this run (their originals go to the archive). */
  rewrites: NewRewrite[];
  levels: LevelReport[];
  tokensAfter: number;
}

/** Tokens of a summary message of `text` (tags and mark included). */
export function summaryMessageTokens(codec: MessageCodec, counter: TokenCounter, text: string): number {
  const parsed = codec.parse(codec.summaryMessage(text), 0);
  return counter.countMessage({ ...parsed, id: '', index: 0 });
}

/** Characters of a shortened or cut text the summarizer sees (head and tail). */
const SUMMARIZER_CLIP_CHARS = 4_000;

/** Head and tail of `text` (already redacted: a cut can no longer split a secret). */
function headAndTail(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[... ${text.length - 2 * half} chars omitted ...]\n${text.slice(-half)}`;
}

/**
 * The message the summarizer sees for an entry. A cleared, shortened or cut message is
 * rebuilt from its original, redacted first and only then clipped (head and tail), so that a kept tail never starts inside a secret its prefix would have named.
 */
function summarizerMessage(entry: ViewEntry, redact: Redactor | undefined): CompactMessage {
  if (entry.content) return entry.content;
  if (!entry.rewrite) return toCompactMessage(entry.item);
  // Cleared results too: the summary should keep the ids and facts of the original.
  const original = toCompactMessage(entry.item);
  const clip = (text: string) => headAndTail(redact ? redact(text) : text, SUMMARIZER_CLIP_CHARS);
  return {
    ...original,
    raw: null, // the wire form holds the clipped original: summarizers read the fields above
    text: clip(original.text),
    toolCalls: original.toolCalls.map((call) => ({ ...call, arguments: clip(call.arguments) })),
    toolResults: original.toolResults.map((result) => ({ ...result, output: clip(result.output) })),
  };
}

/** The conversation as last sent, up to the last folded message (for cached-prefix summarizers), in slices. */
async function sentPrefixField(
  input: CascadeInput,
  folded: readonly ViewEntry[],
  slice: TimeSlice,
): Promise<{ sentPrefix?: SentPrefix }> {
  const { view, codec } = input;
  const prefix = await runStepsYielding(
    sentPrefixSteps(view, input.summaryWire, folded, codec.format),
    slice,
  );
  return prefix ? { sentPrefix: prefix } : {};
}

/** A previous summary without its trailing archive line (the new summary gets a fresh one). */
function withoutArchiveLine(summary: string): string {
  return summary.replace(/\n?Archived originals: recall ref [^\n]*$/, '');
}

/** The messages the summarizer sees for `folded`, giving the loop a turn whenever `slice` has run its time. */
async function summarizerMessages(
  entries: readonly ViewEntry[],
  folded: readonly ViewEntry[],
  redact: Redactor | undefined,
  slice: TimeSlice,
): Promise<CompactMessage[]> {
  const messages = await mapSliced(folded, (entry) => summarizerMessage(entry, redact), slice);
  // A secret split between a folded message and a pinned or kept one beside it is cut here.
  if (redact) cutOuterSeams(entries, folded, messages, (entry) => summarizerMessage(entry, redact), redact);
  return messages;
}

/** Level c: folds the units before the suffix into the next summary. */
async function summarizeLevel(
  run: CascadeRun,
  input: CascadeInput,
  result: CascadeResult,
  slice: TimeSlice,
): Promise<void> {
  const { view, codec, counter, policy } = input;
  const version = view.nextVersion;
  const overhead = summaryMessageTokens(codec, counter, input.formatSummary(version, ''));
  const plan = await runStepsYielding(planSummarySteps(run, input, overhead), slice);
  if (!plan && !view.previousSummary) return;
  const { folded, kept, known, foldedItems, foldedTokens } = await splitFolded(run.entries, plan, slice);
  if (folded.length === 0 && (!input.force || !view.previousSummary)) return;
  const outcome: SummarizeOutcome | undefined = await summarizeWithFallback(
    { ...input.summarize, counter: withKnownCounts(input.summarize.counter, known) },
    {
      sessionId: input.sessionId,
      strategy: policy.strategy,
      messages: await summarizerMessages(run.entries, folded, input.summarize.redact, slice),
      ...(await sentPrefixField(input, folded, slice)),
      maxTokens: plan?.maxTokens ?? policy.maxSummaryTokens,
      ...(view.previousSummary ? { previousSummary: withoutArchiveLine(view.previousSummary) } : {}),
      ...(input.note ? { note: input.note } : {}),
      ...(input.agent ? { agent: input.agent } : {}),
      ...(input.withAssistant ? { withAssistant: true } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    },
    version,
    input.checkSummary,
    plan?.fillTokens,
  );
  const archiveLine = folded.length > 0 ? input.archiveLine?.(version) : undefined;
  let body =
    outcome?.text ??
    (view.previousSummary === undefined ? undefined : withoutArchiveLine(view.previousSummary));
  if (body === undefined && folded.length > 0) {
    // No summary at all: a one-line note tells the model that history was cut, when it fits
    // the budget, or always when the request would otherwise open with an assistant turn on
    // Anthropic (level d then makes room).
    const note = `${folded.length} earlier messages were removed without a summary.`;
    const noteTokens = summaryMessageTokens(
      codec,
      counter,
      input.formatSummary(version, archiveLine ? `${note}\n${archiveLine}` : note),
    );
    const opensWithAssistant = codec.format === 'anthropic' && kept[0]?.item.entry.parsed.role !== 'user';
    if (opensWithAssistant || run.total - foldedTokens - input.summaryTokens + noteTokens <= run.budget)
      body = note;
  }
  if (body !== undefined && archiveLine) body = `${body}\n${archiveLine}`;
  const tokens =
    body === undefined ? 0 : summaryMessageTokens(codec, counter, input.formatSummary(version, body));
  run.entries = kept;
  run.total += tokens - input.summaryTokens - foldedTokens;
  result.folded = foldedItems;
  if (body !== undefined) {
    result.summary = {
      body,
      version,
      summarizer: outcome?.summarizer ?? 'none',
      ...(outcome?.fallback ? { fallback: outcome.fallback } : outcome ? {} : { fallback: 'pruning-only' }),
      tokens,
    };
  }
  result.levels.push({
    level: 'summarize',
    count: folded.length,
    tokensSaved: foldedTokens + input.summaryTokens - tokens,
    refs: archiveLine ? [`sum-v${version}`] : [],
  });
}

/** Fails early, before any summarizer call, when what can never be reduced is over the budget. */
function assertPinnedFit(run: CascadeRun, summaryTokens: number): void {
  const unpinned = run.entries.reduce((sum, entry) => sum + (entry.pinned ? 0 : entry.tokens), 0);
  const fixed = run.total - unpinned - summaryTokens;
  if (fixed <= run.budget) return;
  throw new CompactError(
    'insufficient_budget',
    `pinned messages, system prompt and tool schemas alone take ${fixed} tokens, over the budget of ${run.budget}: reduce protected memory or raise the context limit`,
  );
}

/**
 * Last step when even cutting left the request over budget: the summary loses lines from its
 * end (its least recent-weighted part) until the request fits, keeping at least one line.
 */
function shrinkSummary(
  run: CascadeRun,
  input: CascadeInput,
  summary: NonNullable<CascadeResult['summary']>,
): void {
  const lines = summary.body.split('\n');
  let keep = lines.length;
  let tokens = summary.tokens;
  while (keep > 1 && run.total - summary.tokens + tokens > run.limit) {
    keep = Math.max(1, Math.floor(keep * 0.8));
    tokens = summaryMessageTokens(
      input.codec,
      input.counter,
      input.formatSummary(summary.version, lines.slice(0, keep).join('\n')),
    );
  }
  run.total += tokens - summary.tokens;
  summary.body = lines.slice(0, keep).join('\n');
  summary.tokens = tokens;
}

/**
 * Before the newest message is cut: the summary (this compaction's, else the previous one
 * carried into the next version) gives up its least valued lines, when that alone makes the
 * request fit its limit with the newest whole (cascade/trim-summary-lines.ts).
 */
function trimSummaryForNewest(run: CascadeRun, input: CascadeInput, result: CascadeResult): number {
  const previous = input.summaryTokens > 0 ? input.view.previousSummary : undefined;
  const body = result.summary?.body ?? (previous === undefined ? undefined : withoutArchiveLine(previous));
  if (body === undefined || run.total <= run.limit) return 0;
  const version = result.summary?.version ?? input.view.nextVersion;
  // The summary's tokens as counted in `run.total`.
  const tokens = result.summary?.tokens ?? input.summaryTokens;
  const trimmed = trimSummaryLines({
    body,
    tokens,
    excess: run.total - run.limit,
    countText: (text) => input.counter.countText(text),
    countSummary: (next) =>
      summaryMessageTokens(input.codec, input.counter, input.formatSummary(version, next)),
  });
  if (!trimmed) return 0;
  run.total += trimmed.tokens - tokens;
  result.summary = {
    ...(result.summary ?? { version, summarizer: 'previous' }),
    body: trimmed.body,
    tokens: trimmed.tokens,
  };
  return trimmed.linesGivenUp;
}

/** One report per level (level a may run twice: before summarizing, and for protected results after). */
function mergeLevels(levels: readonly LevelReport[]): LevelReport[] {
  const merged = new Map<string, LevelReport>();
  for (const level of levels) {
    const known = merged.get(level.level);
    if (!known) merged.set(level.level, { ...level, refs: [...level.refs] });
    else {
      known.count += level.count;
      known.tokensSaved += level.tokensSaved;
      known.refs.push(...level.refs);
      if (level.gaveWay !== undefined) known.gaveWay = (known.gaveWay ?? 0) + level.gaveWay;
      if (level.summaryLinesGivenUp !== undefined)
        known.summaryLinesGivenUp = (known.summaryLinesGivenUp ?? 0) + level.summaryLinesGivenUp;
    }
  }
  return [...merged.values()];
}

/** Runs the cascade on a triggered request. */
export async function runCascade(input: CascadeInput): Promise<CascadeResult> {
  // Each level gives the event loop a turn every few milliseconds (a long view's rewrites
  // are realized and counted one message at a time); the slice counts the passes below too.
  const slice = new TimeSlice();
  const run = cascadeRun(input, [...input.view.entries], input.tokensBefore);
  // A turn between the copy of the view's entries and the pinned sum (over 300k entries each
  // is several milliseconds, and they ran with the call's first steps: issue 47).
  if (slice.due()) await slice.pause();
  const result: CascadeResult = {
    entries: [],
    folded: [],
    rewrites: run.rewrites,
    levels: [],
    tokensAfter: 0,
  };
  assertPinnedFit(run, input.summaryTokens);
  const level = <T>(steps: Steps<T>) => runStepsYielding(steps, slice);
  if (run.total > run.target) result.levels.push(await level(clearToolResultSteps(run, input.pairing)));
  if (run.total > run.target) result.levels.push(await level(shortenArgumentSteps(run)));
  // An early compaction (the cost trigger) with a summarizer of the caller's, paid per call,
  // only clears and shortens: summarizing waits for the trigger, and one that frees too
  // little, or leaves the next trigger to summarize anyway, is declined (freesTooLittle,
  // spendsTriggerReserve). It never calls that summarizer.
  const paidEarly =
    input.decision.reason === 'growth paid a rewrite' &&
    !(input.summarize.chain[0] instanceof EmbeddedSummarizer);
  if ((run.total > run.target && !paidEarly) || input.force) await summarizeLevel(run, input, result, slice);
  // Recent results protected by count give way when they alone keep the request over target.
  if (run.total > run.target && !paidEarly)
    result.levels.push(...(await level(giveWaySteps(run, input.pairing))));
  // Cut no deeper than needed: to a tenth under the budget (or the target, when higher). The
  // newest message is cut only when the summary's least valued lines do not make room for it.
  if (run.total > run.budget) {
    const limit = Math.max(run.target, Math.floor(run.budget * 0.9));
    const beforeNewest = () => trimSummaryForNewest(run, input, result);
    result.levels.push(await level(cutOversizedSteps(run, limit, beforeNewest)));
  }
  // Past level d only the limit counts: a request the newest message alone keeps between the
  // budget and the caller's real limit (compactMessages) is sent so, summary whole.
  // Still over: the previous summary, carried as is, is shortened into the next version.
  if (
    run.total > run.limit &&
    !result.summary &&
    input.view.previousSummary !== undefined &&
    input.summaryTokens > 0
  ) {
    result.summary = {
      body: withoutArchiveLine(input.view.previousSummary),
      version: input.view.nextVersion,
      summarizer: 'previous',
      tokens: input.summaryTokens,
    };
  }
  if (run.total > run.limit && result.summary) shrinkSummary(run, input, result.summary);
  if (run.total > run.limit) {
    throw new CompactError(
      'insufficient_budget',
      `pinned messages, system prompt, tool schemas and the latest turn take ${run.total} tokens even after clearing, summarizing and cutting, over the budget of ${run.limit}: reduce protected memory or raise the context limit`,
    );
  }
  result.entries = run.entries;
  result.tokensAfter = run.total;
  result.levels = mergeLevels(result.levels).filter(
    (level) => level.count > 0 || level.level === 'summarize' || level.summaryLinesGivenUp !== undefined,
  );
  return result;
}
